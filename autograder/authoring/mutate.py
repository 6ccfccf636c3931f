"""``torchgrader mutate ASSIGNMENT [--exercise ID] [--jobs N]``: measure each hidden suite against the mistakes
nobody wrote down.

Every mechanical mutant of an exercise's reference (:mod:`autograder.authoring.mutation`) is composed into
a submission as ``validate`` composes a hand-written mutant (every other exercise's reference, this one
changed) and graded on the exercise's hidden suite by the same warm workers ``validate --jobs`` uses
(:func:`autograder.authoring.validate.grade_tasks`: one judge per worker grades one mutant after another
in one pytest run, never a fresh judge per mutant). The unchanged reference is graded first, beside
them: when it does not earn full marks, nothing about its mutants means anything.

A mutant that loses points is killed; one that earns full marks survives. The survivors are printed
with their change and written to the exercise's ``mutation.toml``, keeping what staff wrote about each
survivor that survives again (its status and reason); a new survivor is ``open`` until a new hidden
test catches it (the next run drops it) or staff record it as ``equivalent`` with a one-line reason.
``validate`` shows the score (:func:`autograder.authoring.mutation.check_record`).

This runs outside ``.ci/run`` (minutes per exercise); what CI checks is that the record still matches
the references (``tests/authoring/test_mutation.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import (
    MUTATION_RECORD,
    Assignment,
    Exercise,
    MutationRecord,
    Survivor,
    find_course,
    load_assignment,
    read_mutation_record,
)
from autograder.authoring.cases import SEP, compose
from autograder.authoring.change import WHOLE_FILE
from autograder.authoring.mutation import EQUIVALENT, OPEN, Mutant, mutants_of, reference_digest, tool_version
from autograder.authoring.validate import JOBS, Task, grade_tasks, suite_errors
from autograder.defaults import Owner, add_option
from autograder.errors import AssignmentError, Exit
from autograder.report.text import first_line
from autograder.results import SubmissionResult

KILLED, SURVIVED, ERROR = "killed", "survived", "error"


@dataclass
class Outcome:
    """What the hidden suite did to one mutant."""

    mutant: Mutant
    verdict: str  # killed | survived | error
    detail: str = ""  # the points, or what went wrong


@dataclass
class Analysis:
    """One exercise's mutation analysis."""

    exercise: Exercise
    outcomes: list[Outcome] = field(default_factory=list)
    reference_problem: str = ""  # the reference itself does not earn full marks: no verdict means anything
    seconds: float = 0.0  # grading time of its submissions, added up over the workers
    wall: float = 0.0  # the whole run's time (every exercise in scope shared the workers)

    def of(self, verdict: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.verdict == verdict]

    @property
    def killed(self) -> int:
        return len(self.of(KILLED))


def _verdict(r: SubmissionResult | None, ex: str) -> tuple[str, str]:
    if r is None or r.status != "graded":
        return ERROR, f"not graded ({r.status if r else 'no result'}): {first_line(r.error) if r else ''}"
    if (why := suite_errors(r, ex)) is not None:
        return ERROR, why
    got = [(e.points, e.max_points) for e in r.exercises if e.id == ex and e.tests]
    if not got:
        return ERROR, "no hidden test ran"
    points, full = got[0]
    if points < full:
        failing = [t.name for e in r.exercises if e.id == ex for t in e.tests if t.status != "passed"]
        return KILLED, f"{points:g}/{full:g}, caught by {failing[0]}" + (
            f" and {len(failing) - 1} more" if len(failing) > 1 else "")
    return SURVIVED, f"{points:g}/{full:g}"


def _write_case(dest: Path, code: str) -> Path:
    """A case file that replaces the exercise's reference with ``code`` (a whole-file case)."""
    dest.write_text(f"{WHOLE_FILE}\n{code}", encoding="utf-8")
    return dest


def analyse(assignment: Assignment, exercises: list[str] | None = None, *, jobs: int = JOBS,
            progress: Callable[[str], None] | None = None, limit: int | None = None) -> list[Analysis]:
    """Generate every exercise's mutants and grade them on its hidden suite, all exercises on one pool."""
    chosen = [assignment.exercise(e) for e in exercises] if exercises else assignment.exercises
    chosen = [ex for ex in chosen if ex.reference.is_file()]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="torchgrader-mutate-") as tmp_name:
        tmp = Path(tmp_name)
        tasks: list[Task] = []
        made: dict[str, list[Mutant]] = {}
        for ex in chosen:
            made[ex.id] = mutants_of(ex)[:limit]
            folder = tmp / ex.id
            folder.mkdir()
            paths = [compose(assignment, {}, folder / f"reference{SEP}{ex.id}.py")]
            for i, m in enumerate(made[ex.id]):
                case = _write_case(folder / f"{i:04d}.case.py", m.code)
                paths.append(compose(assignment, {ex.id: case}, folder / f"mutant{SEP}{ex.id}{SEP}{i:04d}.py"))
            tasks.append(Task(paths, [ex.id]))
            if progress:
                progress(f"{ex.id}: {len(made[ex.id])} mutants of {ex.reference.name}")
        total = sum(len(t.paths) for t in tasks)
        done = [0]

        def tick(r: SubmissionResult) -> None:
            done[0] += 1
            if progress:
                kind, _, rest = r.submission.partition(SEP)
                ex_id, _, index = rest.partition(SEP)
                what = "reference" if kind == "reference" else made[ex_id][int(index)].id
                verdict, detail = _verdict(r, ex_id)
                progress(f"[{done[0]}/{total}] {ex_id}: {what}: {verdict} ({detail}; "
                         f"{time.monotonic() - started:.0f} s in all)")

        graded = grade_tasks(assignment, tasks, tmp, jobs=jobs, on_result=tick)
    seconds = time.monotonic() - started
    out = []
    for ex, by_name in zip(chosen, graded, strict=True):
        a = Analysis(ex, seconds=sum(r.seconds for r in by_name.values()), wall=seconds)
        ref = by_name.get(f"reference{SEP}{ex.id}")
        verdict, detail = _verdict(ref, ex.id)
        if verdict != SURVIVED:  # the reference must earn full marks, as a surviving mutant does
            a.reference_problem = f"the reference itself does not earn full marks ({verdict}: {detail})"
        for i, m in enumerate(made[ex.id]):
            a.outcomes.append(Outcome(m, *_verdict(by_name.get(f"mutant{SEP}{ex.id}{SEP}{i:04d}"), ex.id)))
        out.append(a)
    return out


# ---------------------------------------------------------------------- the record
def _q(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def _multiline(text: str) -> str:
    return f"'''\n{text}'''" if "'''" not in text and "\r" not in text else _q(text)


def survivors_of(a: Analysis, old: MutationRecord | None) -> list[Survivor]:
    """Each mutant that survived (or that the grader could not judge), with what staff said of it before."""
    before = {s.id: s for s in old.survivors} if old else {}
    out = []
    for o in a.outcomes:
        if o.verdict == KILLED:
            continue
        m, prior = o.mutant, before.get(o.mutant.id)
        if prior is not None and prior.change == m.change and o.verdict == SURVIVED:
            status, reason = prior.status, prior.reason
        else:
            status, reason = OPEN, ("" if o.verdict == SURVIVED else f"the grader could not judge it: {o.detail}")
        out.append(Survivor(m.id, m.operator, m.function, m.change, status, reason))
    return out


def render_record(a: Analysis, survivors: list[Survivor], suite_digest: str) -> str:
    reference = a.exercise.reference.read_text(encoding="utf-8")
    lines = [
        f"# The mutation analysis of {a.exercise.id}'s reference, written by `torchgrader mutate`.",
        "# Each [[survivor]] earned full marks on the hidden suite: catch it with a hidden test and run mutate",
        f'# again (it then leaves this file), or set status = "{EQUIVALENT}" and say in `reason` why no test can.',
        f"reference = {_q(reference_digest(reference))}",
        f"suite = {_q(suite_digest)}",
        f"tool = {_q(tool_version())}",
        f"generated = {len(a.outcomes)}",
        f"killed = {a.killed}",
        f"seconds = {a.seconds:.1f}  # grading time of its mutants, added up over the workers",
    ]
    for s in survivors:
        lines += ["", "[[survivor]]", f"id = {_q(s.id)}", f"operator = {_q(s.operator)}",
                  f"function = {_q(s.function)}", f"status = {_q(s.status)}", f"reason = {_q(s.reason)}",
                  f"change = {_multiline(s.change)}"]
    return "\n".join(lines) + "\n"


def write_record(a: Analysis) -> tuple[Path, list[Survivor]]:
    """Write the exercise's ``mutation.toml``; the survivors it holds."""
    old, _ = read_mutation_record(a.exercise)
    survivors = survivors_of(a, old)
    suite = reference_digest(a.exercise.hidden_tests.read_text(encoding="utf-8"))
    path = a.exercise.mutation_record
    path.write_text(render_record(a, survivors, suite), encoding="utf-8")
    return path, survivors


# ---------------------------------------------------------------------- the command
def report(a: Analysis, survivors: list[Survivor], out: Callable[[str], None]) -> None:
    counted = len(a.outcomes) - sum(s.status == EQUIVALENT for s in survivors)
    pct = 100.0 * a.killed / counted if counted else 100.0
    out(f"\n{a.exercise.id}: {len(a.outcomes)} mutants, {a.killed} killed, {len(a.of(SURVIVED))} survived, "
        f"{len(a.of(ERROR))} not judged; score {pct:.0f}% ({a.killed}/{counted}, equivalent ones left out)")
    for s in survivors:
        said = f" ({s.reason})" if s.reason else ""
        out(f"  {s.status.upper():<10} {s.id}{said}")
        out("\n".join(f"      {ln}" for ln in s.change.rstrip("\n").splitlines()))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id, e.g. pytorch-fundamentals")
    p.add_argument("--exercise", action="append", help="only this exercise (repeatable)")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    add_option(p, "--jobs", "-j", type=int, owner=Owner(analyse, "jobs"), help="grading processes")
    p.add_argument("--list", action="store_true", help="print the mutants each reference gives; grade nothing")
    p.add_argument("--no-record", dest="record", action="store_false",
                   help=f"grade and report, but leave each exercise's {MUTATION_RECORD} as it is")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def cmd_mutate(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    assignment = load_assignment(args.assignment, course, only=args.exercise)
    if args.list:
        for ex in assignment.exercises:
            if ex.reference.is_file():
                mutants = mutants_of(ex)
                print(f"{ex.id}: {len(mutants)} mutants")
                for m in mutants:
                    print(f"  {m.id} (line {m.line})")
        return Exit.OK

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    analyses = analyse(assignment, args.exercise, jobs=args.jobs, progress=None if args.quiet else progress)
    bad = False
    for a in analyses:
        if a.reference_problem:
            print(f"\n{a.exercise.id}: {a.reference_problem}; nothing recorded (fix it first: `torchgrader try "
                  f"{assignment.id} {a.exercise.id}`)")
            bad = True
            continue
        if args.record:
            path, survivors = write_record(a)
        else:
            old, _ = read_mutation_record(a.exercise)
            path, survivors = a.exercise.mutation_record, survivors_of(a, old)
        report(a, survivors, print)
        if args.record:
            print(f"  recorded in {path}")
        bad |= any(s.status != EQUIVALENT for s in survivors)
    if not analyses:
        raise AssignmentError(f"no exercise of {assignment.id} in scope has a reference to mutate")
    print(f"\n({analyses[0].wall:.0f} s on {args.jobs} worker(s); grading time per exercise: "
          + ", ".join(f"{a.exercise.id} {a.seconds:.0f} s" for a in analyses) + ")")
    return Exit.NO if bad else Exit.OK
