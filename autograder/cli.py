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
    assignment = load_assignment(args.assignment, Path(args.course) if args.course else None)
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torchgrader", description="Grade PyTorch exercises safely.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade notebooks or .py files with the hidden suites")
    g.add_argument("paths", nargs="+", help="submissions: .ipynb or .py files, or folders of them")
    g.add_argument("--assignment", required=True, help="assignment id, e.g. pytorch-fundamentals")
    g.add_argument("--out", required=True, help="output folder (gradebook.csv, per-submission results)")
    g.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    g.add_argument("--exercise", action="append", help="grade only this exercise (repeatable)")
    g.add_argument("--memory-gb", type=float, default=6.0, help="address-space limit per sandbox")
    g.add_argument("--cell-timeout", type=float, default=60.0, help="seconds per notebook cell")
    g.add_argument("--submission-timeout", type=float, default=600.0, help="seconds per submission in all")
    g.add_argument("--no-isolation", action="store_true",
                   help="skip namespaces (rlimits only); for debugging the grader, never for grading")
    g.add_argument("-v", "--verbose", action="store_true", help="list passed tests too")
    g.set_defaults(func=cmd_grade)
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
