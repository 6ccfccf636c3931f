"""Batch grading: a class in minutes, resumable, with a gradebook, feedback and a class report.

The batch's steps, each its own module (around the engine's four stages of
grading one submission, which docs/architecture.md draws):

1. ``inputs``: paths, folders, LMS zips and nbgrader's layout become one
   submission per student (the newest), with the others listed;
2. ``store``: what is already graded (same student, same file content, same
   hidden material) is taken from the database instead of graded again;
3. ``backends``: the rest is graded in parallel by warm workers (trusted
   judge processes; local ones share one sandbox server), results coming back
   as JSON and committed one by one as they arrive;
4. outputs: ``gradebook.csv``, per-student feedback (Markdown, HTML) and
   Gradescope ``results.json``, ``inputs.csv``, ``report.html``, and
   optionally nbgrader's gradebook.

Killing the batch at any moment leaves a database that the next run of the
same command completes; inputs are only ever read.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from autograder.assignment import Assignment
from autograder.batch import DEFAULT_IMAGE
from autograder.batch.backends import DEFAULT_BACKEND, DEFAULT_GPUS, Job, Where, make_backend
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.inputs import Entry, Inputs, Workspace, expand
from autograder.batch.progress import PROGRESS_MODES, make_progress
from autograder.batch.store import DB_NAME, Store, grading_key, suite_version
from autograder.errors import BatchError, BatchInterrupted, WorkerFatal
from autograder.grade import default_jobs
from autograder.printable import printable
from autograder.report.files import writable_folder
from autograder.report.gradebook import write_gradebook
from autograder.report.submission import write_submission
from autograder.results import ExerciseResult, SubmissionResult
from autograder.sandbox import prestart

if TYPE_CHECKING:
    from autograder.batch.review import EarlyReview  # imported where it is made: it loads notebooks


@dataclass
class BatchOptions:
    out: Path
    worker: WorkerConfig
    jobs: int = field(default_factory=default_jobs)  # one worker per core this process may use
    backend: str = DEFAULT_BACKEND
    scheduler: str | None = None
    docker_image: str = DEFAULT_IMAGE
    docker_gpus: str = DEFAULT_GPUS
    regrade: bool = False
    verbose: bool = False
    progress: str = PROGRESS_MODES[0]  # auto | bar | plain
    report: bool = True
    nbgrader_db: Path | None = None
    nbgrader_assignment: str | None = None
    nbgrader_notebook: str | None = None
    argv: list[str] = field(default_factory=list)


@dataclass
class BatchSummary:
    entries: list[Entry]
    results: list[SubmissionResult]  # one per entry, same order
    graded: int  # graded in this run
    reused: int  # taken from the database
    inputs: Inputs
    seconds: float
    suite_version: str
    workers: int

    @property
    def failed(self) -> int:
        return sum(r.status != "graded" for r in self.results)


def grader_failure(assignment: Assignment, entry: Entry, message: str) -> SubmissionResult:
    """The result of a submission the grader could not grade: zero, marked, for staff to look at.

    It took two workers down, or (in the service) its stored file is not the one uploaded.
    """
    return SubmissionResult(
        submission=entry.submission, path=entry.source, assignment=assignment.id, student=entry.student,
        sha256=entry.sha256, status="internal_error",
        error="The grader failed on this submission (not a judgement of your work): staff will grade it. "
              f"Detail for staff: {message.strip().splitlines()[-1][:300] if message.strip() else 'unknown'}",
        exercises=[ExerciseResult(id=e.id, title=e.title, max_points=e.points) for e in assignment.exercises],
    )


def grade_batch(assignment: Assignment, paths: list[str | Path], opts: BatchOptions, *,
                stream: TextIO | None = None, err: TextIO | None = None) -> BatchSummary:
    """Expand the inputs, plan what still needs grading, grade it on the backend, collect every result."""
    stream = stream or sys.stdout
    err = err or sys.stderr
    started = time.monotonic()
    out = writable_folder(opts.out)
    suite = suite_version(assignment)
    opts.worker.suite_version = suite
    settings = grading_settings(opts)
    version = grading_key(suite, settings)  # the store's key: the hidden material and every score-deciding setting
    with Workspace() as ws, Store(out / DB_NAME) as store, contextlib.ExitStack() as later:
        other = sorted(store.assignments() - {assignment.id})
        if other:  # its gradebook, report and feedback pages would overwrite the other assignment's
            raise BatchError(
                f"{out} already holds the grades of {', '.join(other)}: grade {assignment.id} into a folder of "
                f"its own (for example --out {out.parent / (out.name.rstrip('/') + '-' + assignment.id)}); "
                "every assignment keeps its own gradebook.csv, report.html and feedback pages"
            )
        inputs = _expand(assignment, paths, opts, ws, err)
        if opts.report and len(inputs.entries) > 1:  # the class report's charts: matplotlib loads while we grade
            _start_plotting_import()
        store.remember_settings(version, settings)
        todo = _plan(assignment, inputs, store, version, opts)
        if not todo:
            prestart.discard()  # the server the command started for its sandboxes stops importing
        reused = len(inputs.entries) - len(todo)
        print(f"{len(inputs.entries)} submissions ({len(inputs.superseded)} superseded, {len(inputs.problems)} "
              f"unreadable): {len(todo)} to grade, {reused} already graded", file=stream, flush=True)
        if not opts.regrade:
            for why, n in _regrade_reasons(assignment, todo, store, version).items():
                print(f"regrading {n} submission(s) graded before: {why}", file=stream, flush=True)
        run_id = store.open_batch(assignment.id, version, opts.argv, len(todo), reused)
        from autograder.batch.review import EarlyReview

        early = EarlyReview(assignment, inputs.entries, similarity=opts.report)
        try:
            written, workers = (_grade(assignment, todo, opts, store, version, run_id, stream, later, err, early)
                                if todo else (set(), 0))
        except KeyboardInterrupt:
            _write_partial(assignment, inputs, store, version, opts, err)
            raise BatchInterrupted from None
        store.close_batch(run_id)
        results = _collect(assignment, inputs, store, version)
        write_outputs(assignment, inputs, results, opts, err=err, feedback={r.student for r in results} - written,
                      early=early)
    return BatchSummary(inputs.entries, results, len(todo), reused, inputs, time.monotonic() - started,
                        suite, workers)


def _expand(assignment: Assignment, paths: list[str | Path], opts: BatchOptions, ws: Workspace,
            err: TextIO) -> Inputs:
    """The submissions behind the paths (LMS zips, nbgrader layouts, folders); every input folder and the
    output are then kept out of every sandbox's sight."""
    out = opts.out
    inputs = expand(paths, ws.path, exclude=[out], assignment=opts.nbgrader_assignment or assignment.id)
    for p in inputs.problems:
        print(f"skipped: {printable(p)}", file=err)
    for old, new in inputs.superseded:
        print(f"superseded: {printable(old.source)} (student {printable(new.student)}: "
              f"{printable(inputs.why.get(old.source, new.source))})", file=err)
    for note in inputs.notes:
        print(f"note: {printable(note)}", file=err)
    if not inputs.entries:
        raise BatchError("nothing to grade")
    settings = opts.worker.options
    settings.protected = sorted({*settings.protected, out.resolve(), ws.path.resolve(),
                                 *(_folder(Path(p)).resolve() for p in paths)})
    return inputs


def grading_settings(opts: BatchOptions) -> dict[str, Any]:
    """Every setting that can change a score, as plain JSON: part of the store's key (with the hidden material).

    Limits, time budgets, exercises, public or hidden, isolation, the backend's image and GPUs, the device
    this host offers, and the versions of the grader and of torch. Paths (``protected``, the workspace) change
    from run to run without changing a score, and are left out.
    """
    options = opts.worker.options.to_dict()
    options.pop("protected", None)
    if opts.backend == "docker":
        where: dict[str, Any] = {"image": opts.docker_image, "gpus": opts.docker_gpus}
    else:
        where = {"host": "local", "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                 "nvidia": Path("/dev/nvidiactl").exists()}
    where["no_cgroups"] = bool(os.environ.get("TORCHGRADER_NO_CGROUPS"))  # isolation the sandbox server reads
    return {"options": options, "allow_unisolated": opts.worker.allow_unisolated,
            "judge_memory_gb": opts.worker.judge_memory_gb, "where": where, "versions": _versions()}


def _versions() -> dict[str, str]:
    """The grader's version (its release and a digest of its grading code) and torch's, without importing torch."""
    from importlib import metadata

    import autograder

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    root = Path(autograder.__file__).parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):  # the code that grades: reporting, serving, authoring, planning excluded
        rel = p.relative_to(root)
        if rel.parts[0] not in ("report", "authoring", "service") and rel.parts[:2] != ("batch", p.name):
            h.update(rel.as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return {"torchgrader": version("torchgrader"), "grading_code": h.hexdigest()[:12], "torch": version("torch")}


def _regrade_reasons(assignment: Assignment, todo: list[Entry], store: Store, version: str) -> dict[str, int]:
    """Why each file graded before under another key is graded again, counted per reason."""
    reasons: dict[str, int] = {}
    for e in todo:
        why = store.why_regraded(assignment.id, e.student, e.sha256, version)
        if why:
            reasons[why] = reasons.get(why, 0) + 1
    return reasons


def _plan(assignment: Assignment, inputs: Inputs, store: Store, version: str, opts: BatchOptions) -> list[Entry]:
    """What to grade now: everything with --regrade, else what the store has no result for at this version."""
    return [e for e in inputs.entries
            if opts.regrade or not store.has(assignment.id, e.student, e.sha256, version)]


def _grade(assignment: Assignment, todo: list[Entry], opts: BatchOptions, store: Store, version: str, run_id: int,
           stream: TextIO, later: contextlib.ExitStack, err: TextIO, early: EarlyReview) -> tuple[set[str], int]:
    """Grade ``todo`` on the backend, storing and writing each result as it arrives.

    The class review (``early``) starts with the grading: it reads only the files, and its CPU then spreads over
    the batch instead of lengthening its end, when one core is left idle.
    Returns the students whose outputs were written, and the workers alive at the end (Dask's may come and go).
    """
    out = opts.out
    written: set[str] = set()
    by_id = {str(i): e for i, e in enumerate(todo)}
    jobs = [Job(id=k, name=e.path.name, path=e.path) for k, e in by_id.items()]
    try:
        log_dir = opts.out / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        backend = make_backend(opts.backend, Where(opts.worker, opts.jobs, log_dir, docker_image=opts.docker_image,
                                                   docker_gpus=opts.docker_gpus, scheduler=opts.scheduler))
        if not getattr(backend, "shares_server", False):
            prestart.discard()  # its workers start their own servers (containers, Dask)
        close = getattr(backend, "close", None)
        if close:  # after the outputs are written: workers shut down while we write them
            later.callback(close)
    except WorkerFatal as exc:
        raise BatchError(str(exc)) from None
    progress = make_progress(len(jobs), stream, verbose=opts.verbose, mode=opts.progress)

    def deliver(job: Job, result: dict | None, error: str, worker: str) -> None:
        entry = by_id[job.id]
        if result is not None:
            r = SubmissionResult.from_dict(result)
            r.submission, r.student, r.path, r.sha256 = entry.submission, entry.student, entry.source, entry.sha256
        else:
            r = grader_failure(assignment, entry, error)
        store.put(r, version, run_id=run_id, worker=worker)
        if _guarded(f"the feedback of {entry.source}", lambda: write_submission(r, out), err):
            written.add(entry.student)
        progress.advance(r)

    early.start()
    try:
        backend.grade_jobs(jobs, deliver)
    except WorkerFatal as exc:
        raise BatchError(str(exc)) from None
    finally:
        progress.close()
    return written, min(backend.workers, len(jobs))


def _collect(assignment: Assignment, inputs: Inputs, store: Store, version: str) -> list[SubmissionResult]:
    """One result per entry, from the store (this run's and earlier runs')."""
    results: list[SubmissionResult] = []
    for entry in inputs.entries:
        r = store.get(assignment.id, entry.student, entry.sha256, version)
        if r is None:  # only when a worker could not deliver it: already reported
            r = grader_failure(assignment, entry, "no result was recorded")
        results.append(r)
    return results


def _write_partial(assignment: Assignment, inputs: Inputs, store: Store, version: str, opts: BatchOptions,
                   err: TextIO) -> None:
    """After Ctrl-C: the gradebook and report of what is stored, and how to finish (the store resumes)."""
    stored = [store.get(assignment.id, e.student, e.sha256, version) for e in inputs.entries]
    done = [r for r in stored if r is not None]
    missing = len(stored) - len(done)
    try:
        write_outputs(assignment, inputs, stored, opts, err=err,
                      partial=f"Partial: {missing} of {len(stored)} submissions are not graded yet (the batch "
                              "was interrupted). Rerun the same command to finish.")
    except (KeyboardInterrupt, BatchError):  # a second Ctrl-C, or an output not written (said): grades are stored
        pass
    print(f"\ninterrupted: {len(done)} of {len(stored)} submissions graded and stored; {opts.out / 'gradebook.csv'} "
          f"and report.html hold those {len(done)} (partial). Rerun the same command to finish: it grades only "
          f"the {missing} left.", file=err, flush=True)


def _guarded(what: str, write: Callable[[], object], err: TextIO) -> bool:
    """Write one output; a failure is said, and costs only that output (never another student's, never the
    gradebook). True when it was written."""
    try:
        write()
        return True
    except Exception as e:  # noqa: BLE001 - any failure of one output must leave the others to be written
        print(f"could not write {printable(what)}: {printable(type(e).__name__)}: {printable(str(e))[:300]} "
              "(the other outputs are written; rerun to try again)", file=err, flush=True)
        return False


def write_outputs(assignment: Assignment, inputs: Inputs, all_results: Sequence[SubmissionResult | None],
                  opts: BatchOptions, *, partial: str = "", err: TextIO | None = None,
                  feedback: Collection[str] = (), early: EarlyReview | None = None) -> None:
    """The gradebook, inputs.csv and report; ``None`` for a submission not graded yet (``partial`` says so).

    Each student's feedback is written here when they are in ``feedback`` (results reused from the store,
    not written during this run) or the review marks them (blank, duplicate, late: known only now):
    once per student, whichever of the two.

    Each is written on its own: one that fails is reported and the others are still written; the batch
    then fails with :class:`BatchError` naming what is missing (the results stay stored: a rerun writes it).
    ``early``: the review, if it was started while the last submissions were graded (for exactly these).
    """
    from autograder.batch.review import ClassReview, review_class

    err = err or sys.stderr
    failed: list[str] = []

    out = opts.out
    results = [r for r in all_results if r is not None]
    ordered = sorted(results, key=lambda r: (r.student, r.submission))
    names = {e.student: e.name for e in inputs.entries}
    graded = [e for e, r in zip(inputs.entries, all_results, strict=True) if r is not None]
    reviewed: list[ClassReview] = []  # a review that fails costs only its flags and pairs, never the gradebook
    done = early.result(graded, similarity=opts.report) if early is not None else None
    if done is not None:
        reviewed.append(done)
    else:
        _guarded("the review of the class (blank, duplicate, late, similar code)",
                 lambda: reviewed.append(review_class(assignment, graded, similarity=opts.report)), err)
    review = reviewed[0] if reviewed else ClassReview()
    for r in ordered:  # blank, duplicate, late are known only now: those students' feedback says so
        if r.student in feedback or review.attention.get(r.student):
            _guarded(f"the feedback of {r.path}",
                     functools.partial(write_submission, r, out, review.attention.get(r.student, ())), err)
    for name, write in [
        ("gradebook.csv", lambda: write_gradebook(ordered, out / "gradebook.csv", assignment.ids, names,
                                                  review.attention)),
        ("inputs.csv", lambda: write_inputs_csv(out / "inputs.csv", inputs, all_results)),
    ]:
        if not _guarded(str(out / name), write, err):
            failed.append(name)
    if opts.report:
        from autograder.report.classreport import write_class_report

        if not _guarded(str(out / "report.html"), lambda: write_class_report(
                out / "report.html", ordered, title=assignment.title, exercise_ids=assignment.ids,
                superseded=[(new.student, old.source, new.source) for old, new in inputs.superseded],
                problems=inputs.problems, partial=partial, names=names,
                attention=review.attention, pairs=review.pairs), err):
            failed.append("report.html")
    if opts.nbgrader_db and not partial:
        from autograder.batch.nbgrader_db import write_scores

        nb_assignment = opts.nbgrader_assignment or _common(e.nbgrader_assignment for e in inputs.entries) \
            or assignment.id
        notebook = opts.nbgrader_notebook or _common(Path(e.source).stem for e in inputs.entries
                                                     if e.how == "nbgrader layout") or assignment.id
        times = {e.student: e.timestamp for e in inputs.entries}
        layout = {e.student: e.origin or e.path for e in inputs.entries if e.how == "nbgrader layout"}
        write_scores(opts.nbgrader_db, assignment, [(r, times.get(r.student, 0.0)) for r in ordered],
                     nb_assignment=nb_assignment, notebook=notebook, submitted=layout)
    if failed:
        raise BatchError(f"could not write {', '.join(failed)} in {out} (said above); every result is stored: "
                         "rerun the same command to write them")


def _folder(p: Path) -> Path:
    return p if p.is_dir() else p.parent


def _common(values) -> str:
    vals = {v for v in values if v}
    return vals.pop() if len(vals) == 1 else ""


def write_inputs_csv(path: Path, inputs: Inputs, results: Sequence[SubmissionResult | None]) -> None:
    """Every input and what became of it (graded, superseded, unreadable, ignored), with each choice's reason."""
    from autograder.report.csvfile import write_csv

    rows = []
    counted = {new.source: 0 for _, new in inputs.superseded}
    for _, new in inputs.superseded:
        counted[new.source] += 1
    notes: dict[str, list[str]] = {}
    for n in inputs.notes:
        src, _, why = n.partition(": ")
        notes.setdefault(src, []).append(why)
    for e, r in zip(inputs.entries, results, strict=True):
        detail = f"student id from the {e.how}" + (f" ({e.detail})" if e.detail else "") + f"; sha256 {e.sha256[:12]}"
        if counted.get(e.source):
            detail += f"; counts over {counted[e.source]} other file(s) of this student"
        detail += "".join(f"; {n}" for n in notes.get(e.source, []))
        fate = "not graded yet" if r is None else "graded" if r.status == "graded" else r.status
        rows.append([e.source, e.student, e.name, fate, detail])
    for old, new in inputs.superseded:
        detail = inputs.why.get(old.source, f"{new.source} counts")
        detail += "".join(f"; {n}" for n in notes.get(old.source, []))
        rows.append([old.source, old.student, old.name, "superseded", detail])
    for p in inputs.problems:
        src, _, why = p.partition(": ")
        rows.append([src, "", "", "unreadable", why])
    for p in inputs.ignored:
        src, _, why = p.partition(": ")
        rows.append([src, "", "", "ignored", why])
    write_csv(path, ["source", "student", "name", "fate", "detail"], rows)


def _start_plotting_import() -> None:
    import threading

    from autograder.report.classreport import import_plotting

    def load() -> None:
        try:
            import_plotting()
        except Exception:  # noqa: BLE001 - the report imports it again and says what is wrong
            pass

    threading.Thread(target=load, daemon=True, name="tg-import-matplotlib").start()
