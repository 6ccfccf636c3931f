"""``torchgrader try ASSIGNMENT EXERCISE --against CASE``: the staff's inner loop, in seconds.

One exercise's hidden suite (or, with ``--public``, its public tests) runs
against one case: ``reference``, ``stub``, ``alternatives/NAME.py`` or
``mutants/NAME.py`` (relative to the exercise's staff folder; any other path
to a file of submission code works too). The submission is composed exactly
as ``validate`` composes it (every other exercise's reference, this exercise's
case), graded in the real sandbox, and each test is printed with its points
and, with ``--show-feedback``, the message a student with that code would read.

The same cases run under plain pytest, where ``-k``, ``-x`` and ``--pdb`` work
(:mod:`autograder.authoring.pytest_plugin`)::

    pytest solutions/pytorch-fundamentals/views/test_hidden.py --against mutants/flatten_view.py
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from autograder.assignment import ALTERNATIVES_DIR, MUTANTS_DIR, Assignment, Exercise, find_course, load_assignment
from autograder.authoring.cases import compose
from autograder.defaults import Owner, add_option
from autograder.errors import AssignmentError, Exit
from autograder.grade import grade
from autograder.options import GradeOptions
from autograder.printable import printable
from autograder.report.submission import console_cause
from autograder.report.text import block_lines, pts
from autograder.report.view import view
from autograder.results import SubmissionResult

CASES = f"reference | stub | {ALTERNATIVES_DIR}/NAME.py | {MUTANTS_DIR}/NAME.py | PATH"


def case_file(ex: Exercise, against: str) -> Path | None:
    """The file ``against`` names for exercise ``ex`` (None for ``reference`` and ``stub``)."""
    if against in ("reference", "stub"):
        return None
    for candidate in (ex.hidden_dir / against, ex.hidden_dir / f"{against}.py", Path(against)):
        if candidate.is_file():
            return candidate
    known = [f"{p.parent.name}/{p.name}" for p in [*ex.alternatives(), *ex.mutants()]]
    raise AssignmentError(
        f"{against!r} is not a case of {ex.id}: give reference, stub, or one of "
        f"{', '.join(known) or '(no alternatives or mutants yet)'} (or a path to a .py file)"
    )


def compose_case(assignment: Assignment, exercise: str, against: str, dest: Path) -> Path:
    """The submission ``validate`` would grade for this case: the case in place of ``exercise``'s reference."""
    ex = assignment.exercise(exercise)
    if against == "stub":
        return compose(assignment, {}, dest, stubs=(ex.id,))
    source = case_file(ex, against)
    return compose(assignment, {ex.id: source} if source else {}, dest)


def try_case(
    assignment: Assignment, exercise: str, against: str = "reference", *, keyword: str | None = None,
    public: bool = False,
) -> SubmissionResult:
    """Grade one case on one exercise's suite (hidden, or public)."""
    with tempfile.TemporaryDirectory(prefix="torchgrader-try-") as tmp:
        name = Path(against).stem if against not in ("reference", "stub") else against
        path = compose_case(assignment, exercise, against, Path(tmp) / f"{name}.py")
        results = grade(assignment, [path], options=GradeOptions(exercises=[exercise], public=public, keyword=keyword))
    if not results:
        raise AssignmentError(
            f"no test of {exercise}'s {'public' if public else 'hidden'} suite was selected"
            + (f" by -k {keyword!r}" if keyword else "")
        )
    return results[0]


def report(r: SubmissionResult, exercise: str, *, show_feedback: bool, out: Callable[[str], None]) -> int:
    """One line per test (status, points, name, misconception key); the number of tests that did not pass.

    A rendering of the one view-model of a result: with ``--show-feedback``, a cause several tests share
    is printed once, above them, as the student's feedback says it.
    """
    v = view(r)
    bad = 0
    for c in v.cells:
        out(f"  {printable(c.where)}: {printable(c.status)}: {printable(c.first_line)}")
    for e in v.exercises:
        if e.id != exercise:
            continue
        if show_feedback:
            for cause in [*v.causes, *e.causes]:
                out("\n".join(console_cause(cause, v, "  ")))
        unscored = e.max_points == 0  # public tests carry no points: "PASS 0/0" would read as nothing earned
        for t in e.tests:
            bad += not t.passed
            key = f"  [{t.misconception}]" if t.misconception else ""
            out(f"  {t.mark.word:<12} {t.name}{key}" if unscored else f"  {t.mark.word:<12} {t.score}  {t.name}{key}")
            if show_feedback and not t.passed:
                said = [*([printable(t.on_its_line)] if t.on_its_line else []),
                        *(block_lines(t.below.strip(), 1000) if t.below else [])]
                out("\n".join(f"      | {ln}" for ln in said))
                if t.status == "grader_error":
                    out("\n".join(f"      ! {printable(ln)}" for ln in t.detail.strip().splitlines()[:3]))
        if unscored:
            out(f"  {e.passed} of {len(e.tests)} tests pass on {exercise} (these tests carry no points)")
        else:
            out(f"  {pts(e.points)}/{pts(e.max_points)} points on {exercise}")
    if r.status != "graded":
        out(f"  not graded ({r.status}): {printable(r.error)}")
        bad += 1
    return bad


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    p.add_argument("exercise", help="exercise id")
    add_option(p, "--against", metavar="CASE", owner=Owner(try_case, "against"), help=f"what to grade: {CASES}")
    p.add_argument("-k", dest="keyword", help="only the tests this pytest -k expression selects")
    p.add_argument("--public", action="store_true", help="run the public tests instead of the hidden suite")
    p.add_argument(
        "--show-feedback",
        action="store_true",
        help="print, under each test that does not pass, what a student would read",
    )
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


def cmd_try(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    assignment = load_assignment(args.assignment, course)
    assignment.exercise(args.exercise)
    started = time.monotonic()
    r = try_case(assignment, args.exercise, args.against, keyword=args.keyword, public=args.public)
    suite = "public tests" if args.public else "hidden suite"
    print(f"{args.exercise} {suite} against {args.against}" + (f" (-k {args.keyword})" if args.keyword else ""))
    bad = report(r, args.exercise, show_feedback=args.show_feedback, out=print)
    print(f"  ({time.monotonic() - started:.1f} s)")
    return Exit.NO if bad else Exit.OK
