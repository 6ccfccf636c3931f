"""``torchgrader validate ASSIGNMENT``: prove an assignment's suites sound before students see them.

Two phases, and the second only runs when the first finds nothing:

1. **Static** (:mod:`autograder.authoring.lint`; nothing is graded): every file in
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
   swapped in (:mod:`autograder.authoring.cases`), so a mutant is judged in context.
   The all-references submission goes first, on every suite whatever the scope
   (exercises share one namespace); when it fails, validate stops there. A test
   the grader cannot run (an argument the sandbox cannot receive, a probe that
   does not exist) fails the suite, never the student.
   The reference and the stubs are graded on every suite; a mutant or an
   alternative on its own exercise's suite and on every other suite it can
   reach (:func:`autograder.authoring.plan.plan`) with ``--quick``; by default on all of them.
3. **Diagnosis** (from the same results): each mutant declares the misconception
   key(s) it embodies (``# misconception: key[, key2]``, or ``none``); its
   feedback on its own exercise must carry its own key and no other (the
   table's diagnosis column: exact / generic / wrong), and no alternative (nor
   the reference) may receive any misconception key.
   A wrong answer that no misconception predicts (the generated ``perturbed`` and ``nan`` variants of
   the reference) must be told no cause at all (:mod:`autograder.authoring.unknown`).
4. **Determinism**: the reference and one alternative are graded several times
   (``--repeat``; spread over the ``--jobs`` workers beside everything else) and
   every grading must award the same points test by test.

A surviving mutant is reported with its misconception, the functions it
changes, and the hidden tests that exercise them (which should have caught it).
Run: ``torchgrader validate ASSIGNMENT [--exercise ID] [--quick] [--show-feedback] [-j N]``.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import (
    HIDDEN_TESTS,
    REFERENCE,
    STUB,
    Assignment,
    CourseDir,
    Exercise,
    find_course,
    load_assignment,
    load_partial_assignment,
)
from autograder.authoring.cases import POISONS, SEP, Case, cases, compose
from autograder.authoring.forgery import FORGERY, advised, forgery_cases, judge_forgery
from autograder.authoring.lint import (
    ExerciseFacts,
    Problem,
    SuiteKeys,
    changed_names,
    declared_misconceptions,
    defined_names,
    hidden_tests_calling,
    lint_assignment,
    lint_points,
    read_suite_keys,
)
from autograder.authoring.mutation import check_record
from autograder.authoring.plan import imported_names, plan, suite_names
from autograder.authoring.rules import coverage, rule_coverage
from autograder.authoring.stamp import write_stamp
from autograder.authoring.unknown import TWIN, UNKNOWN_CHECK, WRONG_KINDS, judge_unknown
from autograder.defaults import Owner, add_option
from autograder.errors import AssignmentError, Exit
from autograder.grade import default_jobs, grade
from autograder.options import GradeOptions
from autograder.report.text import first_line as _first_line
from autograder.results import SubmissionResult
from autograder.sandbox.client import SandboxServer

GRADER_ERROR = "grader could not"
REPEATS = 3  # gradings of the reference and of one alternative, compared test by test
JOBS = default_jobs(cap=4)  # grading processes: one per core, at most 4 (each holds torch twice)
REPEAT = "repeat"
MUTATION_CHECK = "mutation score"


@dataclass
class Row:
    """One line of an exercise's table."""

    exercise: str
    check: str
    ok: bool
    detail: str
    diagnosis: str = ""  # mutants only: exact | generic | wrong ("-" when it was not caught)
    feedback: list[str] = field(default_factory=list)  # what a student reads (--show-feedback)


# ---------------------------------------------------------------------- phase 1
def static_phase(course: Path, assignment_id: str, only: list[str] | None = None
                 ) -> tuple[Assignment | None, dict[str, ExerciseFacts], list[Problem]]:
    """All authoring checks, every problem in one pass; the assignment is returned only when there is none.

    The points are counted (pytest collects the suites) even when other checks
    failed, so a mistake in the points is never reported only after the others are fixed.
    """
    facts = lint_assignment(course, assignment_id, only)
    problems = [p for f in facts.values() for p in f.problems]
    assignment: Assignment | None
    try:
        assignment = load_assignment(assignment_id, course)
    except AssignmentError as e:
        if not problems:
            problems.append(Problem(CourseDir(course).public(assignment_id), None, str(e)))
        assignment = load_partial_assignment(course, assignment_id)  # count the points of whatever loads
        if assignment is None:
            return None, facts, problems
        complete = False
    else:
        complete = True
    if only:
        for ex_id in only:
            try:
                assignment.exercise(ex_id)
            except AssignmentError as e:
                problems.append(Problem(CourseDir(course).assignment_toml(assignment_id), None, str(e)))
                complete = False
    by_ex, point_problems = lint_points(assignment)
    seen = {(p.path.resolve(), p.line, p.message) for p in problems}
    unparsed = {p.path.resolve() for p in problems if p.message.startswith("does not parse")}
    problems += [p for p in point_problems if (p.path.resolve(), p.line, p.message) not in seen
                 and p.path.resolve() not in unparsed]
    for ex_id, tests in by_ex.items():
        if ex_id in facts:
            facts[ex_id].hidden_tests = len(tests)
    problems += [p for p in rule_coverage(assignment, by_ex, facts) if p.path.resolve() not in unparsed]
    return (assignment if complete and not problems else None), facts, problems


# ---------------------------------------------------------------------- phase 2
def _points(r: SubmissionResult) -> dict[str, tuple[float, float]]:
    return {e.id: (e.points, e.max_points) for e in r.exercises if e.tests}


def _failing(r: SubmissionResult, ex: str, limit: int = 3) -> str:
    out = [f"{t.name}: {_first_line(t.message) or t.status}" for e in r.exercises if e.id == ex for t in e.tests
           if t.status != "passed"]
    more = f" (+{len(out) - limit} more)" if len(out) > limit else ""
    return " | ".join(out[:limit]) + more


def suite_errors(r: SubmissionResult, ex: str) -> str | None:
    """The tests of ``ex`` the grader could not run (the suite's own mistake), named with the cause.

    A student is never blamed for these (the test's points are withheld), so a
    suite that has one is broken, however the submission scored.
    """
    bad = [t for e in r.exercises if e.id == ex for t in e.tests if t.status == "grader_error"]
    if not bad:
        return None
    each = " | ".join(f"{t.name} ({t.nodeid.split('::')[-1]}): "
                      f"{_first_line(t.detail).removeprefix('grader error: ')[:600]}" for t in bad[:3])
    return (f"the grader itself failed in {len(bad)} test(s), first: {each} (a student is told it is not their "
            "mistake and the points are withheld: withheld points must not read as full marks)")


def _suite_errors_in(r: SubmissionResult, scope: list[str]) -> str | None:
    return next((f"{ex}: {why}" for ex in scope if (why := suite_errors(r, ex)) is not None), None)


def student_feedback(r: SubmissionResult, ex: str) -> list[str]:
    """Each failing test of ``ex`` with the message a student reads, as ``name: message``."""
    return [f"{t.name} [{t.status}, {t.points:g}/{t.max_points:g}]: {t.message.strip()}"
            for e in r.exercises if e.id == ex for t in e.tests if t.status != "passed"]


def _broken(r: SubmissionResult) -> str | None:
    if r.status != "graded":
        return f"the submission was not graded ({r.status}): {r.error}"
    return None  # grader errors are judged per exercise (suite_errors)


def _misconception(path: Path) -> str:
    """The first paragraph of a mutant's docstring, on one line."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    except (OSError, SyntaxError):
        return ""
    text = " ".join(doc.strip().split("\n\n")[0].split())
    return text if len(text) <= 240 else text[:237] + "..."


def _not_graded(r: SubmissionResult, pts: dict[str, tuple[float, float]], ex: str, label: str) -> Row | None:
    """The failing row when no hidden test of ``ex`` ran on ``r`` (the submission itself was not graded)."""
    if (why := _broken(r)) or ex not in pts:
        return Row(ex, label, False, why or "no hidden test ran")
    return None


def _per_exercise(r: SubmissionResult, scope: list[str], label: str,
                  judge: Callable[[str, float, float], Row]) -> list[Row]:
    """One row per exercise of ``scope``: ``judge(ex, got, full)`` where ``ex``'s points on ``r`` say something.

    They say nothing when the submission was not graded, no hidden test of ``ex`` ran, or its suite failed
    itself: the row says which.
    """
    pts = _points(r)
    rows = []
    for ex in scope:
        if (row := _not_graded(r, pts, ex, label)) is None:
            why = suite_errors(r, ex)
            row = judge(ex, *pts[ex]) if why is None else Row(ex, label, False, why)
        rows.append(row)
    return rows


def judge_reference(r: SubmissionResult, scope: list[str]) -> list[Row]:
    def judge(ex: str, got: float, full: float) -> Row:
        ok = got >= full
        row = Row(ex, "reference", ok, f"{got:g}/{full:g}" if ok
                  else f"should earn full marks but earned {got:g}/{full:g}: {_failing(r, ex)}")
        if keyed := _keyed(r, [ex]):
            row.ok = False
            row.detail += f"; but it received misconception message(s): {keyed}"
        return row

    return _per_exercise(r, scope, "reference", judge)


def _keyed(r: SubmissionResult, exercises: list[str]) -> str:
    """The tests of ``exercises`` whose feedback names a misconception, as "test [key]"; "" when none."""
    found = [f"{t.name} [{t.misconception}]" for e in r.exercises if e.id in exercises for t in e.tests
             if t.misconception]
    return "; ".join(found)


def judge_stub(r: SubmissionResult, scope: list[str]) -> list[Row]:
    def judge(ex: str, got: float, full: float) -> Row:
        internal = [t for e in r.exercises if e.id == ex for t in e.tests
                    if t.status == "error" and GRADER_ERROR in t.message]
        if got > 0:
            passed = [t.name for e in r.exercises if e.id == ex for t in e.tests if t.points > 0]
            return Row(ex, "stub", False, f"should earn 0 but earned {got:g}/{full:g}; passing on the stub: "
                       + "; ".join(passed[:4]))
        if internal:
            t = internal[0]
            return Row(ex, "stub", False, f"errors outside the student's code in {len(internal)} test(s), "
                       f"first: {t.name}: {_first_line(t.message)[:240]}")
        return Row(ex, "stub", True, f"0/{full:g}, no errors outside the student's code")

    return _per_exercise(r, scope, "stub", judge)


def judge_public(r: SubmissionResult, scope: list[str], on: str) -> list[Row]:
    rows = []
    for ex in scope:
        tests = [t for e in r.exercises if e.id == ex for t in e.tests]
        label = f"public tests on {on}"
        if (why := _broken(r) or suite_errors(r, ex)) or not tests:
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


def _case_points(case: Case, r: SubmissionResult) -> tuple[str, dict[str, tuple[float, float]], Row | None]:
    """An alternative's or a mutant's row label, the points ``r`` earned per exercise, and the failing row
    when its own exercise was not graded (None when it was)."""
    label = f"{case.kind} {case.source.stem}"
    pts = _points(r)
    return label, pts, _not_graded(r, pts, case.exercise, label)


def judge_alternative(case: Case, r: SubmissionResult, scope: list[str]) -> Row:
    label, pts, unjudged = _case_points(case, r)
    if unjudged is not None:
        return unjudged
    ex = case.exercise
    got, full = pts[ex]
    if (why := suite_errors(r, ex) or _suite_errors_in(r, scope)) is not None:
        return Row(ex, label, False, why)
    keyed = _keyed(r, scope)
    told = f"; it received misconception message(s): {keyed}" if keyed else ""
    if got < full:
        return Row(ex, label, False, f"a correct alternative lost points ({got:g}/{full:g}): {_failing(r, ex)}{told}")
    elsewhere = [f"{i} {pts[i][0]:g}/{pts[i][1]:g}" for i in scope if i != ex and i in pts and pts[i][0] < pts[i][1]]
    if elsewhere:
        return Row(ex, label, False, f"full marks on {ex}, but points lost elsewhere: {', '.join(elsewhere)}")
    if keyed:
        return Row(ex, label, False, f"a correct alternative received misconception message(s): {keyed}; a "
                                     "misconception is named only when the evidence fits it")
    return Row(ex, label, True, f"{got:g}/{full:g}")


def diagnose(case: Case, r: SubmissionResult, own: list[str] | None,
             others: dict[str, list[str]], registry: dict[str, str] | None = None) -> tuple[str, str]:
    """(exact | generic | wrong, what is wrong or "") for a caught mutant's feedback on its own exercise.

    ``own`` is the mutant's declared keys ([] for ``none``); ``others`` maps the exercise's other mutants
    to theirs. The feedback's keys are those of its failing tests. Exact: it names one of its own keys
    and nothing else. Generic: it names none (right only for a ``none`` mutant). Wrong: it names a key
    the mutant does not declare; the message then blames a misconception the code does not have.
    With the suite's sentences (key -> sentence: its ``MISCONCEPTIONS`` registry and the literal sentences of
    its dict-keyed misconceptions, :attr:`SuiteKeys.sentences`), what the student reads is checked too: a failing
    test's text that carries another key's sentence, keyed or not, blames that misconception.
    """
    if own is None:
        return "wrong", "it has no `# misconception:` header (an authoring problem)"
    failing = [t for e in r.exercises if e.id == case.exercise for t in e.tests if t.status != "passed"]
    given = {t.misconception for t in failing if t.misconception}
    said = {k for k, sentence in (registry or {}).items() if any(sentence in t.message for t in failing)}
    foreign = sorted((given | said) - set(own))
    if foreign:
        whose = []
        for k in foreign:
            owners = sorted(n for n, keys in others.items() if k in keys)
            tests = [t.name for t in failing if t.misconception == k
                     or (registry and k in registry and registry[k] in t.message)]
            whose.append(f"`{k}` ({'declared by ' + ', '.join(owners) if owners else 'declared by no mutant'}; "
                         f"in {'; '.join(tests[:2])})")
        return "wrong", (f"its feedback names the wrong misconception: {', '.join(whose)}; it declares "
                         f"{', '.join(f'`{k}`' for k in own) or 'none'}. Give that message only when the evidence "
                         "fits it (a tighter wrong value or condition), or fix the mutant's header")
    if given:
        return "exact", ""
    if own:
        return "generic", (f"its feedback names no misconception, though it declares "
                           f"{', '.join(f'`{k}`' for k in own)}: the test that catches it should give that key "
                           "(assert_close(..., misconceptions={key: (message, wrong_value)}) or "
                           "fail(message, misconception=key)) where the evidence fits")
    return "generic", ""


def judge_keys(ex: str, keys: SuiteKeys, mutants: list[SubmissionResult]) -> Row:
    """Every key the suite can name is received by some mutant's feedback, and every key given is registered.

    A key no mutant exercises is a diagnosis nothing proves: its wrong value (or condition) may
    never match, or match the wrong code. Each needs a mutant that makes exactly that mistake.
    """
    received = {t.misconception for r in mutants for e in r.exercises if e.id == ex for t in e.tests
                if t.status != "passed" and t.misconception}
    unexercised = sorted(set(keys.named) - received)
    unregistered = sorted(received - set(keys.registry)) if keys.registry is not None else []
    problems = []
    if unexercised:
        problems.append(f"misconception key(s) the suite can name but no mutant's feedback receives: "
                        f"{', '.join(f'`{k}` ({HIDDEN_TESTS}:{keys.named[k]})' for k in unexercised)}; add a "
                        "mutant that makes each mistake (`torchgrader new-mutant ... --misconception KEY`), or "
                        "drop the key")
    if unregistered:
        problems.append(f"key(s) given at run time but not in MISCONCEPTIONS: {', '.join(unregistered)}")
    if problems:
        return Row(ex, "misconception keys", False, "; ".join(problems))
    where = "registered in MISCONCEPTIONS" if keys.registry is not None else "no MISCONCEPTIONS registry"
    return Row(ex, "misconception keys", True, f"{len(keys.named)} key(s), each received by a mutant ({where})")


def judge_mutant(case: Case, r: SubmissionResult, scope: list[str], assignment: Assignment,
                 declared: dict[str, list[str] | None] | None = None, registry: dict[str, str] | None = None) -> Row:
    """Caught on its own exercise, nowhere else, and diagnosed as the misconception it declares."""
    row = _judge_mutant_points(case, r, scope, assignment)
    row.feedback = student_feedback(r, case.exercise)
    if row.detail.startswith(("SURVIVED", "the submission was not graded", "no hidden test ran", "not caught by")):
        row.diagnosis = "-"
        return row
    declared = declared if declared is not None else {case.source.stem: declared_misconceptions(case.source)}
    own = declared.get(case.source.stem)
    others = {n: k for n, k in declared.items() if n != case.source.stem and k}
    row.diagnosis, problem = diagnose(case, r, own, others, registry)
    if problem:
        row.detail = f"{problem}; {row.detail}" if row.ok else f"{row.detail}; also {problem}"
        row.ok = False
    elif row.diagnosis == "exact":
        keys = sorted({t.misconception for e in r.exercises if e.id == case.exercise for t in e.tests
                       if t.status != "passed" and t.misconception})
        row.detail += "; diagnosed as " + ", ".join(f"`{k}`" for k in keys)
    return row


def _judge_mutant_points(case: Case, r: SubmissionResult, scope: list[str], assignment: Assignment) -> Row:
    label, pts, unjudged = _case_points(case, r)
    if unjudged is not None:
        return unjudged
    ex_id = case.exercise
    got, full = pts[ex_id]
    if (why := suite_errors(r, ex_id)) is not None:
        return Row(ex_id, label, False, f"not caught by a working test: {why}")
    if (why := _suite_errors_in(r, scope)) is not None:
        return Row(ex_id, label, False, f"grader error outside its exercise, in {why}")
    if got >= full and (why := advised(case.source, r, ex_id)) is not None:
        return Row(ex_id, label, True, why)
    if got >= full:
        ex = assignment.exercise(ex_id)
        names = changed_names(ex.reference, case.source)
        suspects = hidden_tests_calling(ex.hidden_tests, ex.probes, names)
        misconception = _misconception(case.source)
        changed = ", ".join(f"`{n}`" for n in names)
        if suspects:
            where = "tests that should have caught it, and passed: " + ", ".join(
                f"{n} ({ex.hidden_tests.name}:{line})" for n, line in suspects)
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


NAN_CHECK = "NaN-returning mutant"


def judge_nan(ex_id: str, nan: SubmissionResult, perturbed: SubmissionResult | None) -> Row:
    """No comparison lets a NaN through: every test that a finite wrong value fails, a NaN fails too.

    Both mutants pass every value the reference's functions return through ``v * c + d``
    (:data:`autograder.authoring.cases.POISONS`); only (c, d) differ, so a test the finite
    twin fails looks at values, and a NaN passing it is a comparison that a NaN passes.
    """
    if perturbed is None:
        return Row(ex_id, NAN_CHECK, False, "its finite twin was not graded")
    if (why := _broken(nan) or _broken(perturbed)) is not None:
        return Row(ex_id, NAN_CHECK, False, why)
    if (why := suite_errors(nan, ex_id) or suite_errors(perturbed, ex_id)) is not None:
        return Row(ex_id, NAN_CHECK, False, f"not judged: {why}")
    nan_failed, twin_failed = ({t.name for e in r.exercises if e.id == ex_id for t in e.tests
                                if t.status != "passed"} for r in (nan, perturbed))
    holes = sorted(twin_failed - nan_failed)
    if holes:
        return Row(ex_id, NAN_CHECK, False,
                   f"a NaN passes {len(holes)} test(s) that a wrong finite value fails: " + "; ".join(holes[:4])
                   + " (a comparison such as `abs(a - b) > tol` is False for NaN: write `not abs(a - b) <= tol`, "
                     "or use judge.within / assert_close)")
    pts = _points(nan).get(ex_id)
    return Row(ex_id, NAN_CHECK, True,
               f"fails every test a wrong finite value fails ({len(nan_failed)} test(s)"
               + (f", {pts[0]:g}/{pts[1]:g}" if pts else "") + ")")


def repeat_cases(cs: list[Case], repeats: int, tmp: Path) -> dict[str, list[Path]]:
    """Copies of the reference and of the first alternative, graded again to show grading is deterministic.

    Keyed by the original case's name; each copy is the same composed file under another name.
    """
    chosen = [c for c in cs if c.kind == "reference"][:1] + [c for c in cs if c.kind == "alternative"][:1]
    out: dict[str, list[Path]] = {}
    for c in chosen:
        out[c.name] = []
        for i in range(1, max(1, repeats)):
            dest = tmp / f"{REPEAT}{i}{SEP}{c.name}.py"
            dest.write_text(c.path.read_text())
            out[c.name].append(dest)
    return out


def _grade_cases(assignment: Assignment, exercises: list[str] | None, tmp: Path, server: SandboxServer | None,
                 jobs: int, full: bool, progress: Callable[[str], None] | None, repeats: int = REPEATS,
                 cs: list[Case] | None = None, reference: SubmissionResult | None = None,
                 ) -> tuple[list[Case], dict[str, tuple[list[str], str]], dict[str, SubmissionResult],
                            dict[str, SubmissionResult], dict[str, list[Path]]]:
    scope = exercises or assignment.ids
    cs = cs if cs is not None else cases(assignment, exercises, tmp)
    suites = plan(assignment, cs, scope, full)
    again = repeat_cases(cs, repeats, tmp)
    public_dir = tmp / "public"
    public_dir.mkdir()
    public_paths = [compose(assignment, {}, public_dir / REFERENCE),
                    compose(assignment, {}, public_dir / STUB, all_stubs=True)]
    tasks = [Task(public_paths, exercises, public=True)]
    groups: dict[tuple[str, ...], list[Path]] = {}
    for c in cs:
        if reference is not None and c.kind == "reference":
            continue  # graded already, on every suite (grade_reference)
        groups.setdefault(tuple(suites[c.name][0]), []).append(c.path)
    for name, copies in again.items():  # last in their group: graded while other workers are busy
        groups.setdefault(tuple(suites[name][0]), []).extend(copies)
    tasks += [Task(paths, None if list(k) == assignment.ids else list(k)) for k, paths in groups.items()]
    total = sum(len(t.paths) for t in tasks)
    started = time.monotonic()
    done = [0]

    def tick(r: SubmissionResult) -> None:
        done[0] += 1
        if progress:
            progress(f"[{done[0]}/{total}] {progress_line(r, public=Path(r.path).parent == public_dir)} "
                     f"({r.seconds:.1f} s; {time.monotonic() - started:.0f} s in all)")

    graded = grade_tasks(assignment, tasks, tmp, server=server, jobs=jobs, on_result=tick)
    pub = graded[0]
    results = {name: r for by_name in graded[1:] for name, r in by_name.items()}
    if reference is not None:
        results["reference"] = reference
    return cs, suites, pub, results, again


def progress_line(r: SubmissionResult, *, public: bool) -> str:
    """What one graded case is and what it got, said so that a public-test run's 0 points reads as none to earn.

    ``public tests on the stub: 0/3 pass (public tests carry no points)``;
    ``mutant views/data_ptr_compare on the hidden suites: 7/10 points``; ``reference (determinism repeat 1) ...``.
    """
    tests = [t for e in r.exercises for t in e.tests]
    if public:
        passed = sum(t.status == "passed" for t in tests)
        return f"public tests on the {r.submission}: {passed}/{len(tests)} pass (public tests carry no points)"
    name = r.submission
    repeat = ""
    if name.startswith(REPEAT) and SEP in name:
        head, name = name.split(SEP, 1)
        repeat = f" (determinism repeat {head.removeprefix(REPEAT)})"
    kind, _, rest = name.partition(SEP)
    what = f"{kind} {rest.replace(SEP, '/')}" if rest else kind
    got = sum(e.points for e in r.exercises if e.tests)
    full = sum(e.max_points for e in r.exercises if e.tests)
    return f"{what}{repeat} on the hidden suites: {got:g}/{full:g} points"


@dataclass
class Task:
    """Submissions graded together against the same suites."""

    paths: list[Path]
    exercises: list[str] | None  # None: every exercise's suite
    public: bool = False


def grade_tasks(assignment: Assignment, tasks: list[Task], tmp: Path, *, server: SandboxServer | None = None,
                jobs: int, on_result: Callable[[SubmissionResult], None] | None = None,
                ) -> list[dict[str, SubmissionResult]]:
    """Each task's results by submission name (a file's stem), in the order of ``tasks``.

    With ``jobs <= 1`` (or two submissions or fewer) in this process, one task
    after another. Otherwise on ``jobs`` workers of the batch's own process
    backend (:mod:`autograder.batch.backends`), each a warm judge with its own
    sandbox server: every submission is a job that names its task's suites, and
    a worker grades consecutive jobs with the same suites in one pytest run.
    ``tmp`` (which holds the composed submissions) is hidden from every sandbox.
    """
    out: list[dict[str, SubmissionResult]] = [{} for _ in tasks]
    if jobs <= 1 or sum(len(t.paths) for t in tasks) <= 2:
        for t, by_name in zip(tasks, out, strict=True):
            if t.paths:
                for r in grade(assignment, t.paths, options=GradeOptions(exercises=t.exercises, public=t.public),
                               server=server, on_result=on_result):
                    by_name[r.submission] = r
        return out
    from autograder.batch.backends import Job
    from autograder.batch.backends.config import WorkerConfig
    from autograder.batch.backends.process import ProcessBackend

    where: dict[str, tuple[int, Path]] = {}
    queue: list[Job] = []
    for i, t in enumerate(tasks):  # in order: equal options stay adjacent, so a worker switches suites rarely
        for p in t.paths:
            job = Job(id=str(len(queue)), name=p.name, path=p, options={"exercises": t.exercises, "public": t.public})
            where[job.id] = (i, p)
            queue.append(job)
    # Staff material, not students' work: graded where namespaces are refused too (the in-process path does
    # the same); the protections each sandbox had are in its result, as always.
    config = WorkerConfig(course=str(assignment.course), assignment=assignment.id,
                          options=GradeOptions(protected=[tmp.resolve()]), allow_unisolated=True)
    # Outside ``tmp``: a worker's error names its log, which must outlive the run that removes ``tmp``.
    log_dir = Path(tempfile.mkdtemp(prefix="torchgrader-validate-logs-"))
    backend = ProcessBackend(config, jobs, log_dir)
    failed: list[str] = []

    def deliver(job: Job, result: dict | None, error: str, worker: str) -> None:
        i, path = where[job.id]
        if result is not None:
            r = SubmissionResult.from_dict(result)
        else:
            failed.append(job.name)
            r = SubmissionResult(submission=path.stem, path=str(path), assignment=assignment.id,
                                 status="internal_error", error=f"{worker} could not grade it: {error.strip()[-1500:]}")
        r.submission, r.path = path.stem, str(path)  # the worker saw a copy under a file name made safe
        out[i][r.submission] = r
        if on_result is not None:
            on_result(r)

    all_graded = False
    try:
        backend.grade_jobs(queue, deliver)
        all_graded = not failed
    finally:
        backend.close()
        if all_graded:  # kept otherwise: the error shown to staff names a log in it
            shutil.rmtree(log_dir, ignore_errors=True)
    return out


def _test_points(r: SubmissionResult, exercises: list[str]) -> dict[tuple[str, str], float]:
    return {(e.id, t.name): t.points for e in r.exercises if e.id in exercises for t in e.tests}


def judge_determinism(cs: list[Case], suites: dict[str, tuple[list[str], str]], results: dict[str, SubmissionResult],
                      again: dict[str, list[Path]], scope: list[str], jobs: int) -> list[Row]:
    """One row per exercise: every grading of the same submission awarded the same points, test by test."""
    by_name = {c.name: c for c in cs}
    diffs: dict[str, list[str]] = {ex: [] for ex in scope}
    graded: dict[str, list[str]] = {ex: [] for ex in scope}
    for name, copies in again.items():
        if not copies:
            continue
        case = by_name[name]
        mine = [ex for ex in suites[name][0] if ex in scope]
        label = "the reference" if case.kind == "reference" else f"alternative {case.source.stem}"
        # An exercise's row names only its own files: an alternative is listed (and its differences reported)
        # under its own exercise, even where it was also graded on other suites.
        rows_of = mine if case.kind == "reference" else [case.exercise] if case.exercise in scope else []
        runs = [results.get(name)] + [results.get(p.stem) for p in copies]
        for ex in rows_of:
            graded[ex].append(f"{label} x{len(runs)}")
        if any(r is None or r.status != "graded" for r in runs):
            for ex in rows_of:
                diffs[ex].append(f"{label}: {sum(r is None or r.status != 'graded' for r in runs)} of {len(runs)} "
                                 "gradings did not complete")
            continue
        points = [_test_points(r, mine) for r in runs if r is not None]  # none is (checked above)
        for key in sorted(set().union(*points)):
            seen = [pt.get(key) for pt in points]
            if len(set(seen)) > 1:
                row = key[0] if key[0] in rows_of else case.exercise
                on = "" if row == key[0] else f" (on {key[0]}'s suite)"
                diffs.setdefault(row, []).append(f"{label}: {key[1]}{on} earned " + ", ".join(
                    "missing" if v is None else f"{v:g}" for v in seen))
    rows = []
    where = f" ({jobs} parallel workers)" if jobs > 1 else ""
    for ex in scope:
        if not graded[ex]:
            continue
        if diffs[ex]:
            rows.append(Row(ex, "determinism", False, "points differ between gradings of the same submission"
                            f"{where}: " + " | ".join(diffs[ex][:4]) + (" ..." if len(diffs[ex]) > 4 else "")))
        else:
            rows.append(Row(ex, "determinism", True, f"{', '.join(graded[ex])}{where}: identical points, test by "
                                                     "test"))
    return rows


def grade_reference(assignment: Assignment, path: Path, server: SandboxServer | None) -> SubmissionResult:
    """The all-references submission, graded on every suite of the assignment."""
    return grade(assignment, [path], server=server)[0]


def shadowing(assignment: Assignment, broken: str) -> str:
    """Names other exercises' references define that ``broken``'s suite uses: the likely cause, or ""."""
    uses = suite_names(assignment.exercise(broken).hidden_tests, assignment.exercise(broken).probes)
    found = []
    for ex in assignment.exercises:
        if ex.id == broken or not ex.reference.is_file():
            continue
        try:
            tree = ast.parse(ex.reference.read_text())
        except SyntaxError:
            continue
        imported = imported_names(tree)
        found += [f"{ex.id}'s reference defines `{n}` ({ex.reference.name}:{line})"
                  for n, line in defined_names(tree).items()
                  if n in uses and n not in imported]
    return f"{'; '.join(found[:3])}, which the suite of {broken} uses; " if found else ""


STOPPED = ("nothing else was graded: every other case is the reference with one file swapped in, so each would "
           "fail the same way. Fix the reference (or the suite) first")


def grading_phase(assignment: Assignment, exercises: list[str] | None = None, *,
                  server: SandboxServer | None = None, jobs: int, full: bool = True,
                  progress: Callable[[str], None] | None = None, repeats: int = REPEATS) -> list[Row]:
    """Phase 2: grade the material and judge every case; one Row per check.

    The all-references submission goes first, on every suite of the assignment
    whatever the scope (a new exercise can break another one: a name defined
    twice). When it does not earn full marks nothing else is graded: every other
    case is the reference with one file swapped in and would repeat the failure.
    """
    scope = exercises or assignment.ids
    rows: list[Row] = []
    own_server = server is None
    if own_server:
        server = SandboxServer()
    try:
        with tempfile.TemporaryDirectory(prefix="torchgrader-validate-") as tmp:
            cs = cases(assignment, exercises, Path(tmp)) + forgery_cases(assignment, exercises, Path(tmp))
            ref = grade_reference(assignment, next(c.path for c in cs if c.kind == "reference"), server)
            if progress:
                progress(f"reference on every hidden suite: {sum(e.points for e in ref.exercises if e.tests):g}/"
                         f"{sum(e.max_points for e in ref.exercises if e.tests):g} points ({ref.seconds:.1f} s)")
            ref_rows = judge_reference(ref, assignment.ids)
            if not all(r.ok for r in ref_rows):
                failed = [r for r in ref_rows if not r.ok]
                for bad in failed:
                    bad.feedback = student_feedback(ref, bad.exercise)
                return [*ref_rows, Row(failed[0].exercise, "stopped", False,
                                       shadowing(assignment, failed[0].exercise) + STOPPED)]
            cs, suites, pub, results, again = _grade_cases(assignment, exercises, Path(tmp), server, jobs, full,
                                                           progress, repeats, cs=cs, reference=ref)
    finally:
        if own_server and server is not None:
            server.close()
    declared = {ex: {c.source.stem: declared_misconceptions(c.source) for c in cs
                     if c.kind == "mutant" and c.exercise == ex} for ex in scope}
    keys = {ex: read_suite_keys(assignment.exercise(ex).hidden_tests) for ex in scope}
    for c in cs:
        r = results[c.name]
        graded, why = suites[c.name]
        if c.kind in POISONS:
            if c.kind == "nan":
                rows.append(judge_nan(c.exercise, r, results.get(f"perturbed{SEP}{c.exercise}")))
                said = judge_unknown(c.exercise, {k: results.get(f"{k}{SEP}{c.exercise}") for k in WRONG_KINDS},
                                     results.get(f"{TWIN}{SEP}{c.exercise}"),
                                     keys[c.exercise].sentences if c.exercise in keys else None)
                rows.append(Row(c.exercise, UNKNOWN_CHECK, said.ok, said.detail))
            continue
        if c.kind == FORGERY:
            label, ok, detail = judge_forgery(c, r, results)
            rows.append(Row(c.exercise, label, ok, detail))
            continue
        if c.kind == "reference":
            rows += judge_reference(r, scope)
        elif c.kind == "stub":
            rows += judge_stub(r, scope)
        else:
            row = (judge_alternative(c, r, graded) if c.kind == "alternative"
                   else judge_mutant(c, r, graded, assignment, declared.get(c.exercise),
                                     keys[c.exercise].sentences if c.exercise in keys else None))
            if row.ok and len(graded) > 1:
                row.detail += f"; no effect on the {len(graded) - 1} other exercise(s)" + (
                    f" it can reach ({why})" if why else "")
            rows.append(row)
    for ex in scope:
        rows.append(judge_keys(ex, keys[ex], [results[c.name] for c in cs if c.kind == "mutant" and c.exercise == ex]))
    rows += judge_public(pub["reference"], scope, "reference")
    rows += judge_public(pub["stub"], scope, "stub")
    rows += judge_determinism(cs, suites, results, again, scope, jobs)
    return rows


# ---------------------------------------------------------------------- the table
ORDER = ("static checks", "public tests cover", "rules covered", MUTATION_CHECK, "reference", "stopped",
         "public tests on reference", "stub", "public tests on stub", "determinism", NAN_CHECK, UNKNOWN_CHECK)


def _order(row: Row) -> tuple[int, str]:
    if row.check in ORDER:
        return ORDER.index(row.check), ""
    return (len(ORDER), row.check) if row.check.startswith("alternative") else (len(ORDER) + 1, row.check)


def table(assignment: Assignment, rows: list[Row], facts: dict[str, ExerciseFacts], *,
          show_feedback: bool = False) -> str:
    """One block per exercise; with ``show_feedback`` each failing case's student-facing messages under its row."""
    lines = []
    width = max([len(r.check) for r in rows] + [26]) + 2
    for ex in assignment.exercises:
        mine = sorted((r for r in rows if r.exercise == ex.id), key=_order)
        if not mine:
            continue
        lines.append(f"\n{ex.id} — {ex.title} ({ex.points:g} points){diagnosis_summary(mine)}")
        for r in mine:
            lines.append(f"  {'ok' if r.ok else 'FAIL':<5} {r.check:<{width}} {r.diagnosis:<8} {r.detail}")
            if show_feedback or (not r.ok and r.check == "reference"):
                lines += [f"        | {ln}" for fb in r.feedback for ln in fb.splitlines()]
    return "\n".join(lines)


def diagnosis_summary(rows: list[Row]) -> str:
    """"; diagnosis: 7 exact, 3 generic, 0 wrong" for an exercise's mutant rows ("" without mutants)."""
    found = [r.diagnosis for r in rows if r.check.startswith("mutant ")]
    if not found:
        return ""
    counts = ", ".join(f"{found.count(d)} {d}" for d in ("exact", "generic", "wrong"))
    missed = found.count("-")
    return f"; diagnosis of {len(found)} mutants: {counts}" + (f", {missed} not caught" if missed else "")


def static_rows(facts: dict[str, ExerciseFacts], assignment: Assignment, scope: list[str]) -> list[Row]:
    rows = []
    for ex in assignment.exercises:
        if ex.id in scope and ex.id in facts:
            f = facts[ex.id]
            rows.append(Row(ex.id, "static checks", True,
                            f"{f.hidden_tests} hidden tests ({ex.points:g} points), {f.public_tests} public, "
                            f"{f.alternatives} alternatives, {f.mutants} mutants"))
            rows.append(public_coverage_row(ex.id, f))
            if f.rules:
                rows.append(Row(ex.id, RULES_CHECK, *coverage(f)))
            rows.append(mutation_row(ex))
    return rows


RULES_CHECK = "rules covered"


def mutation_row(ex: Exercise) -> Row:
    """The exercise's recorded mutation score (:mod:`autograder.authoring.mutation`); failing when the record is
    stale or leaves a survivor unexplained. An exercise with no record yet says so, and passes."""
    check = check_record(ex)
    if check.record is None and check.ok:
        return Row(ex.id, MUTATION_CHECK, True, f"{check.summary()} (`torchgrader mutate {ex.hidden_dir.parent.name}"
                                                f" --exercise {ex.id}` measures it)")
    return Row(ex.id, MUTATION_CHECK, check.ok, check.summary() + "".join(f"; {p}" for p in check.problems[:3]))


def public_coverage_row(ex_id: str, f: ExerciseFacts) -> Row:
    """Every function students write is called by some public test, or the row names those that are not."""
    if f.untouched:
        return Row(ex_id, "public tests cover", False, "no public test calls " + ", ".join(
            f"`{n}`" for n in f.untouched) + ": a student whose code is wrong there sees every public test pass; add "
            "a public test that checks one value of each")
    return Row(ex_id, "public tests cover", True, f"every function students write ({', '.join(f.contract)})")


def validate(assignment_id: str, course: Path | None = None, exercises: list[str] | None = None, *,
             server: SandboxServer | None = None, jobs: int = JOBS, static_only: bool = False, full: bool = True,
             out: Callable[[str], None] = print, progress: Callable[[str], None] | None = None,
             repeats: int = REPEATS, show_feedback: bool = False) -> int:
    """Run both phases and print the report; the exit status: OK sound, NO a check failed, ERROR authoring mistakes.

    Each exercise that passes gets its pass recorded, which ``release`` asks for
    (:mod:`autograder.authoring.stamp`, :func:`record_passes`).
    """
    course = Path(course) if course else find_course()
    assignment, facts, problems = static_phase(course, assignment_id, exercises)
    if problems or assignment is None:
        out(f"validate {assignment_id}: {len(problems)} authoring problem(s); nothing was graded\n")
        for p in problems:
            out(f"  {p.format(course)}")
        return Exit.ERROR
    scope = exercises or assignment.ids
    rows = static_rows(facts, assignment, scope)
    out(f"validate {assignment_id}: static checks pass ({len(scope)} exercise{'s' if len(scope) != 1 else ''}, "
        f"{sum(assignment.exercise(i).points for i in scope):g} points)")
    if static_only:
        out(table(assignment, rows, facts))
        return Exit.NO if any(not r.ok for r in rows) else Exit.OK
    out("Each mutant and alternative is graded on its own exercise and on every other exercise it can reach "
        "(a name that exercise's suite uses, or a global effect such as patching torch)"
        + ("; by default (--full) every case is graded on every suite." if full
           else "; --quick: only there."))
    rows += grading_phase(assignment, exercises, server=server, jobs=jobs, full=full, progress=progress,
                          repeats=repeats)
    out(table(assignment, rows, facts, show_feedback=show_feedback))
    bad = [r for r in rows if not r.ok]
    out(f"\n{len(rows)} checks: {len(rows) - len(bad)} ok, {len(bad)} failing")
    for r in bad:
        out(f"  FAIL {r.exercise}: {r.check}: {r.detail}")
    if any(r.check == "stopped" for r in bad):
        out("\nThe reference does not earn full marks (above, with what a student would read): " + STOPPED + ".")
    if recorded := record_passes(course, assignment_id, rows, exercises, "full" if full else "quick"):
        out(f"\nValidation pass recorded for {', '.join(recorded)} (release asks again only for what changes)")
    return Exit.NO if bad else Exit.OK


def record_passes(course: Path, assignment_id: str, rows: list[Row], exercises: list[str] | None,
                  mode: str) -> list[str]:
    """Record a pass for each exercise in scope whose every row is ok (:mod:`autograder.authoring.stamp`).

    Nothing is recorded when grading stopped at the reference. A whole run that passes also records the
    assignment as one; ``release`` then asks only for the exercises changed since their pass.
    """
    if any(r.check == "stopped" for r in rows):
        return []
    failing = {r.exercise for r in rows if not r.ok}
    scope = exercises or list(dict.fromkeys(r.exercise for r in rows))
    if exercises is None and not failing:
        write_stamp(course, assignment_id, mode)
        return scope
    passed = [ex for ex in scope if ex not in failing]
    if passed:
        write_stamp(course, assignment_id, mode, exercises=passed)
    return passed


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id, e.g. pytorch-fundamentals")
    p.add_argument("--exercise", action="append", help="only this exercise (repeatable); its mutants are then "
                                                       "checked against the chosen exercises only")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    add_option(p, "--jobs", "-j", type=int, owner=Owner(validate, "jobs"), help="grading processes")
    p.add_argument("--static-only", action="store_true", help="only the authoring checks; grade nothing")
    reach_group = p.add_mutually_exclusive_group()
    reach_group.add_argument("--full", dest="quick", action="store_false",
                             help="grade every mutant and alternative on every exercise's suite (the default)")
    reach_group.add_argument("--quick", dest="quick", action="store_true",
                             help="grade each mutant and alternative only on the exercises it can reach (by static "
                                  "analysis) instead of on every exercise's suite")
    p.set_defaults(quick=False)  # --full is the default (each action would otherwise bring its own)
    p.add_argument("--show-feedback", action="store_true",
                   help="under each mutant (and stub), print what a student with that code would read")
    add_option(p, "--repeat", type=int, owner=Owner(validate, "repeats"),
               help="grade the reference and one alternative this many times and require identical points "
                    "(default: %(default)s; 1 skips the check)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def cmd_validate(args: argparse.Namespace) -> int:
    stream = sys.stderr  # grading redirects sys.stderr while pytest runs; progress goes here

    def progress(line: str) -> None:
        print(line, file=stream, flush=True)

    return validate(args.assignment, Path(args.course) if args.course else None, args.exercise, jobs=args.jobs,
                    static_only=args.static_only, full=not args.quick, out=lambda s: print(s, flush=True),
                    progress=None if args.quiet else progress, repeats=args.repeat,
                    show_feedback=args.show_feedback)

