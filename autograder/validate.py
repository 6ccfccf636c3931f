"""``torchgrader validate ASSIGNMENT``: prove an assignment's suites sound before students see them.

Two phases, and the second only runs when the first finds nothing:

1. **Static** (:mod:`autograder.authoring`; nothing is graded): every file in
   place, TOML valid, every Python file parses, every test has a docstring
   (the name students see), every hidden test has ``@pytest.mark.points``, every
   ``assert`` has a message, the hidden points add up to ``exercise.toml``'s
   ``points``, no hidden test is identical to a public one, every mutant's
   docstring names its misconception. Each mistake is reported as
   ``file:line: what is wrong``.
2. **Grading** (the exercise's own material, in the real sandbox): the reference
   earns full marks; the stub earns 0 without errors outside the student's
   code; every correct alternative earns full marks; every mutant loses points
   on its own exercise and nowhere else; the public tests pass on the
   reference. Each submission is every exercise's reference with one file
   swapped in (:mod:`autograder.selftest`), so a mutant is judged in context.
   The reference and the stubs are graded on every suite; a mutant or an
   alternative on its own exercise's suite and on every other suite it can
   reach (:func:`plan`) with ``--quick``; by default on all of them.

A surviving mutant is reported with its misconception, the functions it
changes, and the hidden tests that exercise them (which should have caught it).
Run: ``torchgrader validate ASSIGNMENT [--exercise ID] [--quick] [-j N]``.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.assignment import Assignment, AssignmentError, find_course, load_assignment
from autograder.authoring import (
    ExerciseFacts,
    Problem,
    changed_names,
    check_assignment,
    check_points,
    hidden_tests_calling,
    reach,
)
from autograder.grade import GradeOptions, grade
from autograder.results import SubmissionResult
from autograder.sandbox.client import SandboxServer
from autograder.selftest import Case, cases, compose

GRADER_ERROR = "grader could not"


@dataclass
class Row:
    """One line of an exercise's table."""

    exercise: str
    check: str
    ok: bool
    detail: str


# ---------------------------------------------------------------------- phase 1
def static_phase(course: Path, assignment_id: str, only: list[str] | None = None
                 ) -> tuple[Assignment | None, dict[str, ExerciseFacts], list[Problem]]:
    """All authoring checks; the assignment is returned only when it loads."""
    facts = check_assignment(course, assignment_id, only)
    problems = [p for f in facts.values() for p in f.problems]
    if problems:
        return None, facts, problems
    try:
        assignment = load_assignment(assignment_id, course)
    except AssignmentError as e:
        return None, facts, [Problem(course / "assignments" / assignment_id, None, str(e))]
    if only:
        for ex_id in only:
            try:
                assignment.exercise(ex_id)
            except AssignmentError as e:
                problems.append(Problem(course / "assignments" / assignment_id / "assignment.toml", None, str(e)))
    by_ex, point_problems = check_points(assignment)
    problems += point_problems
    for ex_id, tests in by_ex.items():
        if ex_id in facts:
            facts[ex_id].hidden_tests = len(tests)
    return (None if problems else assignment), facts, problems


# ---------------------------------------------------------------------- phase 2
def _points(r: SubmissionResult) -> dict[str, tuple[float, float]]:
    return {e.id: (e.points, e.max_points) for e in r.exercises if e.tests}


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0] if s and s.strip() else ""


def _failing(r: SubmissionResult, ex: str, limit: int = 3) -> str:
    out = [f"{t.name}: {_first_line(t.message) or t.status}" for e in r.exercises if e.id == ex for t in e.tests
           if t.status != "passed"]
    more = f" (+{len(out) - limit} more)" if len(out) > limit else ""
    return " | ".join(out[:limit]) + more


def _broken(r: SubmissionResult) -> str | None:
    if r.status != "graded":
        return f"the submission was not graded ({r.status}): {r.error}"
    if r.grader_errors:  # withheld points would hide a grader bug behind "full marks"
        t = r.grader_errors[0]
        return (f"the grader itself failed in {len(r.grader_errors)} test(s), first: {t.name}: "
                f"{_first_line(t.detail)[:240]}")
    return None


def _misconception(path: Path) -> str:
    """The first paragraph of a mutant's docstring, on one line."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    except (OSError, SyntaxError):
        return ""
    text = " ".join(doc.strip().split("\n\n")[0].split())
    return text if len(text) <= 240 else text[:237] + "..."


def judge_reference(r: SubmissionResult, scope: list[str]) -> list[Row]:
    pts = _points(r)
    rows = []
    for ex in scope:
        if (why := _broken(r)) or ex not in pts:
            rows.append(Row(ex, "reference", False, why or "no hidden test ran"))
            continue
        got, full = pts[ex]
        ok = got >= full
        rows.append(Row(ex, "reference", ok, f"{got:g}/{full:g}" if ok
                        else f"should earn full marks but earned {got:g}/{full:g}: {_failing(r, ex)}"))
    return rows


def judge_stub(r: SubmissionResult, scope: list[str]) -> list[Row]:
    pts = _points(r)
    rows = []
    for ex in scope:
        if (why := _broken(r)) or ex not in pts:
            rows.append(Row(ex, "stub", False, why or "no hidden test ran"))
            continue
        got, full = pts[ex]
        internal = [t for e in r.exercises if e.id == ex for t in e.tests
                    if t.status == "error" and GRADER_ERROR in t.message]
        if got > 0:
            passed = [t.name for e in r.exercises if e.id == ex for t in e.tests if t.points > 0]
            rows.append(Row(ex, "stub", False, f"should earn 0 but earned {got:g}/{full:g}; passing on the stub: "
                            + "; ".join(passed[:4])))
        elif internal:
            t = internal[0]
            rows.append(Row(ex, "stub", False, f"errors outside the student's code in {len(internal)} test(s), "
                            f"first: {t.name}: {_first_line(t.message)[:240]}"))
        else:
            rows.append(Row(ex, "stub", True, f"0/{full:g}, no errors outside the student's code"))
    return rows


def judge_public(r: SubmissionResult, scope: list[str], on: str) -> list[Row]:
    rows = []
    for ex in scope:
        tests = [t for e in r.exercises if e.id == ex for t in e.tests]
        label = f"public tests on {on}"
        if (why := _broken(r)) or not tests:
            rows.append(Row(ex, label, False, why or "no public test ran"))
            continue
        if on == "reference":
            bad = [t for t in tests if t.status != "passed"]
            rows.append(Row(ex, label, not bad, f"{len(tests) - len(bad)}/{len(tests)} pass" if not bad
                            else "should pass on the reference: " + " | ".join(
                                f"{t.name}: {_first_line(t.message) or t.status}" for t in bad[:3])))
        else:
            internal = [t for t in tests if t.status == "error" and GRADER_ERROR in t.message]
            rows.append(Row(ex, label, not internal, "no errors outside the student's code" if not internal
                            else f"errors outside the student's code: {internal[0].name}: "
                                 f"{_first_line(internal[0].message)[:240]}"))
    return rows


def judge_alternative(case: Case, r: SubmissionResult, scope: list[str]) -> Row:
    pts = _points(r)
    label = f"alternative {case.source.stem}"
    ex = case.exercise
    if (why := _broken(r)) or ex not in pts:
        return Row(ex, label, False, why or "no hidden test ran")
    got, full = pts[ex]
    if got < full:
        return Row(ex, label, False, f"a correct alternative lost points ({got:g}/{full:g}): {_failing(r, ex)}")
    elsewhere = [f"{i} {pts[i][0]:g}/{pts[i][1]:g}" for i in scope if i != ex and i in pts and pts[i][0] < pts[i][1]]
    if elsewhere:
        return Row(ex, label, False, f"full marks on {ex}, but points lost elsewhere: {', '.join(elsewhere)}")
    return Row(ex, label, True, f"{got:g}/{full:g}")


def judge_mutant(case: Case, r: SubmissionResult, scope: list[str], assignment: Assignment) -> Row:
    pts = _points(r)
    label = f"mutant {case.source.stem}"
    ex_id = case.exercise
    if (why := _broken(r)) or ex_id not in pts:
        return Row(ex_id, label, False, why or "no hidden test ran")
    got, full = pts[ex_id]
    if got >= full:
        ex = assignment.exercise(ex_id)
        names = changed_names(ex.reference, case.source)
        suspects = hidden_tests_calling(ex.hidden_tests, ex.probes, names)
        misconception = _misconception(case.source)
        changed = ", ".join(f"`{n}`" for n in names)
        if suspects:
            where = "tests that should have caught it, and passed: " + ", ".join(
                f"{n} (test_hidden.py:{line})" for n, line in suspects)
        else:
            where = f"no hidden test exercises {changed or 'what it changes'}"
        return Row(ex_id, label, False,
                   f"SURVIVED: mutant {case.source.name} earned full marks ({got:g}/{full:g}) on {ex_id}"
                   + (f"; misconception: {misconception}" if misconception else "")
                   + (f"; it changes {changed}" if names else "")
                   + f"; {where}. Add (or restore) a hidden test that fails on it.")
    elsewhere = [f"{i} {pts[i][0]:g}/{pts[i][1]:g}" for i in scope if i != ex_id and i in pts
                 and pts[i][0] < pts[i][1]]
    if elsewhere:
        lost = "; ".join(_failing(r, i, 2) for i in scope if i != ex_id and i in pts and pts[i][0] < pts[i][1])
        return Row(ex_id, label, False, f"caught on {ex_id}, but it also lost points outside its exercise: "
                   f"{', '.join(elsewhere)} ({lost}); either the mutant reaches into other exercises or "
                   f"their suites depend on {ex_id}'s code")
    caught = [t.name for e in r.exercises if e.id == ex_id for t in e.tests if t.status != "passed"]
    return Row(ex_id, label, True, f"caught ({got:g}/{full:g}) by {len(caught)} test(s): " + "; ".join(caught[:3])
               + (" ..." if len(caught) > 3 else ""))


# ---------------------------------------------------------------------- grading, optionally in parallel
_WORKER_SERVER: SandboxServer | None = None


def _worker_init() -> None:
    global _WORKER_SERVER
    import torch

    torch.set_num_threads(1)
    _WORKER_SERVER = SandboxServer()


def _worker_grade(assignment_id: str, course: str, paths: list[str], exercises: list[str] | None,
                  public: bool) -> list[dict]:
    a = load_assignment(assignment_id, Path(course))
    rs = grade(a, [Path(p) for p in paths], server=_WORKER_SERVER,
               options=GradeOptions(exercises=exercises, public=public))
    return [r.to_dict() for r in rs]


@dataclass
class Task:
    """Submissions graded together against the same suites."""

    paths: list[Path]
    exercises: list[str] | None  # None: every exercise's suite
    public: bool = False


def grade_all(assignment: Assignment, tasks: list[Task], *, server: SandboxServer | None = None, jobs: int = 1,
              on_result: Callable[[SubmissionResult], None] | None = None) -> list[SubmissionResult]:
    """Grade every task; with ``jobs > 1``, in that many worker processes (each with its own sandbox server)."""
    tasks = [t for t in tasks if t.paths]
    out: list[SubmissionResult] = []
    if jobs <= 1 or sum(len(t.paths) for t in tasks) <= 2:
        for t in tasks:
            out += grade(assignment, t.paths, options=GradeOptions(exercises=t.exercises, public=t.public),
                         server=server, on_result=on_result)
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    chunks: list[Task] = []
    for t in tasks:  # small chunks keep every worker busy until the end
        size = max(1, min(4, len(t.paths) // jobs or 1))
        chunks += [Task(t.paths[i:i + size], t.exercises, t.public) for i in range(0, len(t.paths), size)]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init) as pool:
        futures = [pool.submit(_worker_grade, assignment.id, str(assignment.course), [str(p) for p in c.paths],
                               c.exercises, c.public) for c in chunks]
        for fut in as_completed(futures):
            for d in fut.result():
                r = SubmissionResult.from_dict(d)
                out.append(r)
                if on_result:
                    on_result(r)
    return out


def plan(assignment: Assignment, cs: list[Case], scope: list[str], full: bool) -> dict[str, tuple[list[str], str]]:
    """Per case, the suites it is graded on (its own exercise first) and why any other one is included.

    The reference and the stubs are graded on every suite in scope. A swapped-in file is graded on its
    own exercise and on every other exercise it can reach (:func:`autograder.authoring.reach`): a file
    that defines no name another suite uses and has no global effect cannot change another exercise's
    results, so grading it there again would only repeat the reference's run. ``full`` grades every
    case on every suite in scope.
    """
    out: dict[str, tuple[list[str], str]] = {}
    for c in cs:
        if not c.exercise or full:
            out[c.name] = (list(scope), "")
            continue
        others, why = reach(assignment, c.exercise, c.source)
        others = [e for e in others if e in scope]
        out[c.name] = ([c.exercise, *others], why if others else "")
    return out


def _grade_cases(assignment: Assignment, exercises: list[str] | None, tmp: Path, server: SandboxServer | None,
                 jobs: int, full: bool, progress: Callable[[str], None] | None
                 ) -> tuple[list[Case], dict[str, tuple[list[str], str]], dict[str, SubmissionResult],
                            dict[str, SubmissionResult]]:
    scope = exercises or assignment.ids
    cs = cases(assignment, exercises, tmp)
    suites = plan(assignment, cs, scope, full)
    public_dir = tmp / "public"
    public_dir.mkdir()
    public_paths = [compose(assignment, {}, public_dir / "reference.py"),
                    compose(assignment, {}, public_dir / "stub.py", all_stubs=True)]
    tasks = [Task(public_paths, exercises, public=True)]
    groups: dict[tuple[str, ...], list[Path]] = {}
    for c in cs:
        groups.setdefault(tuple(suites[c.name][0]), []).append(c.path)
    tasks += [Task(paths, None if list(k) == assignment.ids else list(k)) for k, paths in groups.items()]
    total = len(cs) + len(public_paths)
    started = time.monotonic()
    done = [0]

    def tick(r: SubmissionResult) -> None:
        done[0] += 1
        if progress:
            got = sum(e.points for e in r.exercises if e.tests)
            full = sum(e.max_points for e in r.exercises if e.tests)
            progress(f"[{done[0]}/{total}] {r.submission.replace('--', ' ')}: {got:g}/{full:g} "
                     f"({r.seconds:.1f} s; {time.monotonic() - started:.0f} s in all)")

    pub = {r.submission: r for r in grade_all(assignment, tasks[:1], server=server, on_result=tick)}
    results = {r.submission: r for r in grade_all(assignment, tasks[1:], server=server, jobs=jobs, on_result=tick)}
    return cs, suites, pub, results


def run_validation(assignment: Assignment, exercises: list[str] | None = None, *,
                   server: SandboxServer | None = None, jobs: int = 1, full: bool = True,
                   progress: Callable[[str], None] | None = None) -> list[Row]:
    """Phase 2: grade the material and judge every case; one Row per check."""
    scope = exercises or assignment.ids
    rows: list[Row] = []
    own_server = server is None and jobs <= 1
    if own_server:
        server = SandboxServer()
    try:
        with tempfile.TemporaryDirectory(prefix="torchgrader-validate-") as tmp:
            cs, suites, pub, results = _grade_cases(assignment, exercises, Path(tmp), server, jobs, full, progress)
    finally:
        if own_server and server is not None:
            server.close()
    for c in cs:
        r = results[c.name]
        graded, why = suites[c.name]
        if c.kind == "reference":
            rows += judge_reference(r, scope)
        elif c.kind == "stub":
            rows += judge_stub(r, scope)
        else:
            row = (judge_alternative(c, r, graded) if c.kind == "alternative"
                   else judge_mutant(c, r, graded, assignment))
            if row.ok and len(graded) > 1:
                row.detail += f"; no effect on the {len(graded) - 1} other exercise(s)" + (
                    f" it can reach ({why})" if why else "")
            rows.append(row)
    rows += judge_public(pub["reference"], scope, "reference")
    rows += judge_public(pub["stub"], scope, "stub")
    return rows


# ---------------------------------------------------------------------- the table
ORDER = ("static checks", "reference", "public tests on reference", "stub", "public tests on stub")


def _order(row: Row) -> tuple[int, str]:
    if row.check in ORDER:
        return ORDER.index(row.check), ""
    return (len(ORDER), row.check) if row.check.startswith("alternative") else (len(ORDER) + 1, row.check)


def table(assignment: Assignment, rows: list[Row], facts: dict[str, ExerciseFacts]) -> str:
    lines = []
    width = max([len(r.check) for r in rows] + [26]) + 2
    for ex in assignment.exercises:
        mine = sorted((r for r in rows if r.exercise == ex.id), key=_order)
        if not mine:
            continue
        lines.append(f"\n{ex.id} — {ex.title} ({ex.points:g} points)")
        for r in mine:
            lines.append(f"  {'ok' if r.ok else 'FAIL':<5} {r.check:<{width}} {r.detail}")
    return "\n".join(lines)


def static_rows(facts: dict[str, ExerciseFacts], assignment: Assignment, scope: list[str]) -> list[Row]:
    rows = []
    for ex in assignment.exercises:
        if ex.id in scope and ex.id in facts:
            f = facts[ex.id]
            rows.append(Row(ex.id, "static checks", True,
                            f"{f.hidden_tests} hidden tests ({ex.points:g} points), {f.public_tests} public, "
                            f"{f.alternatives} alternatives, {f.mutants} mutants"))
    return rows


def validate(assignment_id: str, course: Path | None = None, exercises: list[str] | None = None, *,
             server: SandboxServer | None = None, jobs: int = 1, static_only: bool = False, full: bool = True,
             out: Callable[[str], None] = print, progress: Callable[[str], None] | None = None) -> int:
    """Run both phases and print the report; the exit status: 0 sound, 1 a check failed, 2 authoring mistakes."""
    course = Path(course) if course else find_course()
    assignment, facts, problems = static_phase(course, assignment_id, exercises)
    if problems or assignment is None:
        out(f"validate {assignment_id}: {len(problems)} authoring problem(s); nothing was graded\n")
        for p in problems:
            out(f"  {p.format(course)}")
        return 2
    scope = exercises or assignment.ids
    rows = static_rows(facts, assignment, scope)
    out(f"validate {assignment_id}: static checks pass ({len(scope)} exercise{'s' if len(scope) != 1 else ''}, "
        f"{sum(assignment.exercise(i).points for i in scope):g} points)")
    if static_only:
        out(table(assignment, rows, facts))
        return 0
    out("Each mutant and alternative is graded on its own exercise and on every other exercise it can reach "
        "(a name that exercise's suite uses, or a global effect such as patching torch)"
        + ("; --full: every case on every suite." if full else "; --full grades every case on every suite."))
    rows += run_validation(assignment, exercises, server=server, jobs=jobs, full=full, progress=progress)
    out(table(assignment, rows, facts))
    bad = [r for r in rows if not r.ok]
    out(f"\n{len(rows)} checks: {len(rows) - len(bad)} ok, {len(bad)} failing")
    for r in bad:
        out(f"  FAIL {r.exercise}: {r.check}: {r.detail}")
    return 1 if bad else 0


def default_jobs() -> int:
    return max(1, min(4, len(os.sched_getaffinity(0))))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id, e.g. pytorch-fundamentals")
    p.add_argument("--exercise", action="append", help="only this exercise (repeatable); its mutants are then "
                                                       "checked against the chosen exercises only")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    p.add_argument("--jobs", "-j", type=int, default=default_jobs(), help="grading processes (default: %(default)s)")
    p.add_argument("--static-only", action="store_true", help="only the authoring checks; grade nothing")
    p.add_argument("--quick", action="store_true",
                   help="grade each mutant and alternative only on the exercises it can reach (by static analysis) "
                        "instead of on every exercise's suite")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def cmd_validate(args: argparse.Namespace) -> int:
    stream = sys.stderr  # grading redirects sys.stderr while pytest runs; progress goes here

    def progress(line: str) -> None:
        print(line, file=stream, flush=True)

    return validate(args.assignment, Path(args.course) if args.course else None, args.exercise, jobs=args.jobs,
                    static_only=args.static_only, full=not args.quick, out=lambda s: print(s, flush=True),
                    progress=None if args.quiet else progress)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="torchgrader validate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        return cmd_validate(args)
    except AssignmentError as e:
        print(f"validate: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
