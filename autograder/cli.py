"""The ``torchgrader`` command.

This process only reads arguments, starts workers and writes reports: it never
imports torch or pytest (``tests/test_cold_start.py`` holds it to that), so
the first line appears at once and the workers' start-up is the only wait.
Grading in this process (``check``) imports the judge inside ``grade()``,
after the sandbox server has started.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder import gcpause
from autograder.assignment import load_assignment
from autograder.batch.backends import REGISTRY
from autograder.defaults import Owner, add_option, default_of
from autograder.errors import AssignmentError, Exit, TorchgraderError, meaning
from autograder.options import Budget, GradeOptions
from autograder.printable import printable
from autograder.sandbox import prestart
from autograder.sandbox.isolation import Limits


def _options(args: argparse.Namespace) -> GradeOptions:
    limits = Limits(memory_bytes=int(args.memory_gb * 2**30))
    budget = Budget(cell_seconds=args.cell_timeout, submission_seconds=args.submission_timeout)
    return GradeOptions(limits=limits, budget=budget, isolate=not args.no_isolation,
                        exercises=args.exercise or None)


def cmd_grade(args: argparse.Namespace) -> int:
    """TAs: grade a class in parallel, resumably; gradebook, feedback and class report in --out."""
    from autograder.batch.backends.config import WorkerConfig
    from autograder.batch.runner import BatchOptions, grade_batch
    from autograder.report.text import plural

    assignment = load_assignment(args.assignment, Path(args.course) if args.course else None, only=args.exercise)
    from autograder.batch.image_digest import stale_image_problem

    stale = stale_image_problem(assignment.id)  # inside a grader image: is the mounted checkout newer?
    if stale:
        print(f"torchgrader: {stale}", file=sys.stderr)
        return Exit.ERROR
    out = Path(args.out)
    worker = WorkerConfig(course=str(assignment.course), assignment=assignment.id, options=_options(args),
                          allow_unisolated=args.allow_unisolated, fallback_unisolated=args.allow_unisolated)
    opts = BatchOptions(out=out, worker=worker, jobs=args.jobs or default_of(BatchOptions, "jobs"),
                        backend=args.backend, scheduler=args.scheduler, docker_image=args.docker_image,
                        docker_gpus=args.gpus, regrade=args.regrade,
                        verbose=args.verbose, progress=args.progress, nbgrader_db=args.nbgrader_db,
                        nbgrader_assignment=args.nbgrader_assignment, nbgrader_notebook=args.nbgrader_notebook,
                        argv=sys.argv[1:])
    summary = grade_batch(assignment, args.paths, opts)  # a BatchError is said by main(), as every error is
    rate = 60 * summary.graded / summary.seconds if summary.seconds else 0
    print(f"\n{len(summary.results)} submissions: {summary.graded} graded now ({rate:.0f}/min on "
          f"{plural(summary.workers, 'worker')}), {summary.reused} already graded, {summary.failed} not gradable, "
          f"{len(summary.inputs.superseded)} superseded, {len(summary.inputs.problems)} unreadable inputs skipped")
    print(f"Gradebook: {out / 'gradebook.csv'} ({len(summary.results)} submissions)")
    print(f"Class report: {out / 'report.html'}; feedback: {out}/<student>/feedback.html")
    if args.nbgrader_db:
        print(f"nbgrader gradebook updated: {args.nbgrader_db}")
    return Exit.OK


def _assignment_of(path: Path, given: str | None) -> str:
    if given:
        return given
    if path.suffix == ".ipynb":
        import json

        try:
            meta = json.loads(path.read_text()).get("metadata", {})
            found = meta.get("torchgrader", {}).get("assignment")
            if found:
                return str(found)
        except (OSError, ValueError, AttributeError):
            pass
    raise AssignmentError(f"cannot tell which assignment {path.name} belongs to: pass --assignment ID")


def cmd_check(args: argparse.Namespace) -> int:
    """Students: run the public tests on your own notebook, in the same sandbox as grading."""
    from autograder.checker import student_course

    path = Path(args.notebook)
    course = student_course(args.course, near=path.resolve().parent, in_jupyter=False)
    assignment = load_assignment(_assignment_of(path, args.assignment), course, need_hidden=False,
                                 only=args.exercise)
    from autograder.checker import off_linux, still_to_write

    if (why := off_linux("torchgrader check")) is not None:
        from autograder.errors import LoadError
        from autograder.load import load

        try:
            sources = [c.source for c in load(path).cells]
        except LoadError:
            sources = []
        print("\n".join([why, *still_to_write(assignment, sources)]))
        return Exit.ERROR
    options = _options(args)
    options.public = True
    stream = sys.stdout
    from autograder.checker import check_report
    from autograder.grade import grade

    print(f"Checking {path.name} against the public tests of {assignment.id}, in the grading sandbox...",
          file=stream, flush=True)
    gcpause.pause()  # until the judge has imported torch and collected the suites (it resumes it then)
    try:
        results = grade(assignment, [path], options=options)
    finally:
        gcpause.resume()
    failing = 0
    for r in results:
        print(check_report(r, assignment), file=stream)
        failing += sum(t.status != "passed" for e in r.exercises for t in e.tests) + (r.status != "graded")
    return Exit.NO if failing or not results else Exit.OK


def _gib(n_bytes: int) -> float:
    return n_bytes / 2**30


def _add_limits(g: argparse.ArgumentParser) -> None:
    g.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    g.add_argument("--exercise", action="append", help="only this exercise (repeatable)")
    add_option(g, "--memory-gb", type=float, owner=Owner(Limits, "memory_bytes", _gib),
               help="address-space limit per sandbox, in GiB")
    add_option(g, "--cell-timeout", type=float, owner=Owner(Budget, "cell_seconds"), help="seconds per notebook cell")
    add_option(g, "--submission-timeout", type=float, owner=Owner(Budget, "submission_seconds"),
               help="seconds per submission in all")
    g.add_argument("--no-isolation", action="store_true",
                   help="skip namespaces (rlimits only); for debugging the grader, never for grading")


def add_grade_arguments(g: argparse.ArgumentParser) -> None:
    from autograder.batch.progress import PROGRESS_MODES
    from autograder.batch.runner import BatchOptions

    g.add_argument("paths", nargs="+", help="submissions: .ipynb or .py files, folders of them, LMS zip downloads, "
                   "nbgrader's submitted/ folder")
    g.add_argument("--assignment", required=True, help="assignment id, e.g. pytorch-fundamentals")
    g.add_argument("--out", required=True, help="output folder: gradebook.csv, report.html, <student>/feedback.html, "
                   "grades.sqlite (what makes a rerun resume)")
    _add_limits(g)
    add_option(g, "-j", "--jobs", type=int, owner=Owner(BatchOptions, "jobs"),
               help="parallel workers, one per core of this machine unless given")
    add_option(g, "--backend", choices=list(REGISTRY), owner=Owner(BatchOptions, "backend"),
               help="where workers run: local processes, Docker or rootless Podman containers, a Dask cluster")
    g.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786), for --backend dask")
    add_option(g, "--docker-image", owner=Owner(BatchOptions, "docker_image"),
               help="grader image for --backend docker or podman (built from docker/cpu/Dockerfile)")
    add_option(g, "--gpus", owner=Owner(BatchOptions, "docker_gpus"),
               help="GPUs for --backend docker containers, as `docker run --gpus` takes them (all, device=0, ...), "
                    "or none; auto: all for a GPU image (a tag with gpu/cuda), none otherwise")
    g.add_argument("--regrade", action="store_true", help="grade everything again, even what is already graded")
    g.add_argument("--allow-unisolated", action="store_true",
                   help="grade even where the kernel refuses namespaces (student code could then read the hidden "
                        "tests); by default grading refuses to start there")
    add_option(g, "--progress", choices=list(PROGRESS_MODES), owner=Owner(BatchOptions, "progress"),
               help="auto: a progress bar on a terminal, plain lines otherwise")
    g.add_argument("--nbgrader-db", type=Path, help="also write the scores into this nbgrader gradebook.db")
    g.add_argument("--nbgrader-assignment", help="the assignment's name in nbgrader (default: from the "
                   "submitted/ layout, else --assignment)")
    g.add_argument("--nbgrader-notebook", help="the notebook's name in nbgrader (default: the submitted "
                   "notebook's name, else --assignment)")
    g.add_argument("-v", "--verbose", action="store_true", help="print every submission's full report")


def add_check_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("notebook")
    c.add_argument("--assignment", help="assignment id (read from the notebook when omitted)")
    _add_limits(c)


# A function, or "module:function" where the function lives in a module imported only when its command is
# the one being run (or none is known yet, for --help): `validate` imports the judge and torch, which `grade`
# and `check` must not pay for in this process.
Ref = Callable[..., Any] | str


def _resolve(ref: Ref) -> Callable[..., Any]:
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Command:
    """One ``torchgrader`` command: all that the parser and the dispatch know of it."""

    name: str
    help: str
    arguments: Ref  # adds the command's arguments to its own ArgumentParser
    handler: Ref  # runs it on the parsed arguments; returns the exit status

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        _resolve(self.arguments)(parser)

    def run(self, args: argparse.Namespace) -> int:
        return int(_resolve(self.handler)(args) or 0)


def _staff(name: str, handler: str, help_: str, arguments: str = "add_arguments") -> Command:
    """A command whose code lives in its own module (course staff's authoring tools, the service).

    ``handler`` is "module:function" under ``autograder``; the arguments are added by the same module's
    ``arguments`` function.
    """
    module = handler.partition(":")[0]
    return Command(name, help_, f"autograder.{module}:{arguments}", f"autograder.{handler}")


COMMANDS: tuple[Command, ...] = (
    Command("grade", "grade notebooks or .py files with the hidden suites", add_grade_arguments, cmd_grade),
    Command("check", "students: run the public tests on your notebook", add_check_arguments, cmd_check),
    _staff("new", "authoring.scaffold:cmd_new",
           "staff: scaffold a new exercise with every file in place; without an exercise, a new assignment "
           "(empty, or --from a copy without its validation record)"),
    _staff("try", "authoring.trial:cmd_try",
           "staff: run one exercise's suite against one case (reference, stub, an alternative, a mutant) in seconds"),
    _staff("new-mutant", "authoring.scaffold:cmd_new_mutant",
           "staff: scaffold a mutant: the reference's function as a change to edit", "add_mutant_arguments"),
    _staff("tidy-mutants", "authoring.scaffold:cmd_tidy_mutants",
           "staff: rewrite mutants as their minimal change to the reference (older ones included)",
           "add_tidy_arguments"),
    _staff("validate", "authoring.validate:cmd_validate",
           "staff: prove an assignment's suites sound (reference, stubs, mutants)"),
    _staff("mutate", "authoring.mutate:cmd_mutate",
           "staff: grade every mechanical mutant of each reference on its hidden suite; record the survivors"),
    _staff("release", "authoring.release:cmd_release",
           "staff: build the student bundle (notebook, public tests, how-to)"),
    _staff("notebook", "authoring.notebook:cmd_notebook",
           "staff: build the student notebook from the exercise folders"),
    _staff("export-gradescope", "authoring.gradescope_export:cmd_export", "staff: write a Gradescope autograder zip"),
    # the course's submission service (autograder/service/)
    _staff("serve", "service.command:cmd_serve",
           "staff: run the course's submission service (students submit and get their feedback in seconds)",
           "add_serve_arguments"),
    _staff("submit", "service.client:cmd_submit", "students: submit a notebook to the course's torchgrader service",
           "add_submit_arguments"),
)
BY_NAME = {c.name: c for c in COMMANDS}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command`` (``grade``, ``check``, ...), only that command's arguments are built
    (and only its module imported); without, every command's (``--help``)."""
    p = argparse.ArgumentParser(prog="torchgrader", description="Grade PyTorch exercises safely.")
    sub = p.add_subparsers(dest="command", required=True)
    for c in COMMANDS:
        parser = sub.add_parser(c.name, help=c.help)
        if command is None or command == c.name:
            c.add_arguments(parser)
    return p


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first word that is not an option), if any."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    named = _command_of(argv)
    if named == "grade" and not {"-h", "--help"} & set(argv):
        prestart.start()  # the sandbox server imports torch while this reads the rest (sandbox/prestart.py)
    try:
        args = build_parser(named).parse_args(argv)
        command = BY_NAME[args.command]
        return command.run(args)
    # Each error's exit code is errors.TABLE's (docs/errors.md); its message is said as a sentence, never a traceback.
    except TorchgraderError as e:  # every deliberate error carries its own person-facing message
        print(f"torchgrader: {printable(e.message, lines=True)}", file=sys.stderr)
        return meaning(e).exit
    except KeyboardInterrupt as e:
        if not getattr(e, "said", False):  # a batch (BatchInterrupted) has said what it kept and how to finish
            print("\ninterrupted: results written so far are kept", file=sys.stderr)
        return meaning(e).exit
    except OSError as e:  # the user's own files: a path that cannot be read or written, said as a sentence
        where = f" {e.filename}" if e.filename else ""
        print(f"torchgrader: cannot use{where}: {e.strerror or e}. Check the path and its permissions.",
              file=sys.stderr)
        return meaning(e).exit
    finally:
        prestart.discard()  # unless a backend adopted it


def run() -> None:
    """The ``torchgrader`` command: :func:`main`, then exit without tearing the interpreter down.

    By then every result is stored, every report written and closed, and the
    workers are gone. What is left (exit handlers aside, which still run) is
    Python freeing its modules one by one: a tenth of a second after ``grade``,
    more after ``check``, which imported torch. Tests call :func:`main`.
    """
    import atexit
    import os

    code = main()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
