"""The ``torchgrader`` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.assignment import AssignmentError, load_assignment
from autograder.grade import GradeOptions, grade
from autograder.load import SUBMISSION_SUFFIXES
from autograder.report import console_report, protections_report, write_gradebook, write_submission
from autograder.results import SubmissionResult
from autograder.run import Budget
from autograder.sandbox.isolation import Limits


def expand_inputs(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Files as given; folders contribute their notebooks and .py files (sorted)."""
    out: list[Path] = []
    problems: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix in SUBMISSION_SUFFIXES and q.is_file()
                           and not q.name.startswith("."))
            if not found:
                problems.append(f"{p}: no .ipynb or .py files in this folder")
            out += found
        elif p.exists():
            out.append(p)
        else:
            problems.append(f"{p}: no such file or folder")
    return out, problems


def _options(args: argparse.Namespace) -> GradeOptions:
    limits = Limits(memory_bytes=int(args.memory_gb * 2**30))
    budget = Budget(cell_seconds=args.cell_timeout, submission_seconds=args.submission_timeout)
    return GradeOptions(limits=limits, budget=budget, isolate=not args.no_isolation,
                        exercises=args.exercise or None)


def cmd_grade(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.assignment, Path(args.course) if args.course else None, only=args.exercise)
    paths, problems = expand_inputs(args.paths)
    for p in problems:
        print(f"skipped: {p}", file=sys.stderr)
    if not paths:
        print("nothing to grade", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    options = _options(args)
    options.protected.append(out.resolve())
    results: list[SubmissionResult] = []
    shown = False
    stream = sys.stdout  # grading silences pytest's own output; ours goes here

    def on_result(r: SubmissionResult) -> None:
        nonlocal shown
        results.append(r)
        if not shown and r.protections:
            print(protections_report(r.protections), file=stream)
            shown = True
        write_submission(r, out)
        write_gradebook(results, out / "gradebook.csv", assignment.ids)
        print(console_report(r, verbose=args.verbose), file=stream, flush=True)

    grade(assignment, paths, options=options, on_result=on_result)
    print(f"\nGradebook: {out / 'gradebook.csv'} ({len(results)} submissions)")
    return 0


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
    path = Path(args.notebook)
    assignment = load_assignment(_assignment_of(path, args.assignment),
                                 Path(args.course) if args.course else None, need_hidden=False, only=args.exercise)
    options = _options(args)
    options.public = True
    stream = sys.stdout
    results = grade(assignment, [path], options=options)
    for r in results:
        print(console_report(r, verbose=True), file=stream)
        failing = [t for e in r.exercises for t in e.tests if t.status != "passed"]
        print("\nAll public tests pass. The grading tests use other inputs: test edge cases too."
              if not failing else f"\n{len(failing)} public test(s) to fix.", file=stream)
    return 0


def _add_limits(g: argparse.ArgumentParser) -> None:
    g.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    g.add_argument("--exercise", action="append", help="only this exercise (repeatable)")
    g.add_argument("--memory-gb", type=float, default=6.0, help="address-space limit per sandbox")
    g.add_argument("--cell-timeout", type=float, default=60.0, help="seconds per notebook cell")
    g.add_argument("--submission-timeout", type=float, default=600.0, help="seconds per submission in all")
    g.add_argument("--no-isolation", action="store_true",
                   help="skip namespaces (rlimits only); for debugging the grader, never for grading")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torchgrader", description="Grade PyTorch exercises safely.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade notebooks or .py files with the hidden suites")
    g.add_argument("paths", nargs="+", help="submissions: .ipynb or .py files, or folders of them")
    g.add_argument("--assignment", required=True, help="assignment id, e.g. pytorch-fundamentals")
    g.add_argument("--out", required=True, help="output folder (gradebook.csv, per-submission results)")
    _add_limits(g)
    g.add_argument("-v", "--verbose", action="store_true", help="list passed tests too")
    g.set_defaults(func=cmd_grade)
    c = sub.add_parser("check", help="students: run the public tests on your notebook")
    c.add_argument("notebook")
    c.add_argument("--assignment", help="assignment id (read from the notebook when omitted)")
    _add_limits(c)
    c.set_defaults(func=cmd_check)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AssignmentError as e:
        print(f"torchgrader: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: results written so far are kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
