"""Issue 44, item 4: a wrong answer that no misconception predicts is told no cause.

validate grades each exercise's reference with every returned value scaled and shifted (``perturbed``) or
NaN (``nan``), beside a twin that changes no value (``identity``); a failing test of the first two may name
a misconception only where the twin's same test names it too (a fact of the wrapper, not of the values).
"""

from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.authoring.cases import POISONS, SEP, cases
from autograder.authoring.lint import read_suite_keys
from autograder.authoring.unknown import TWIN, WRONG_KINDS, judge_unknown, named_causes, per_test
from autograder.grade import GradeOptions, grade
from autograder.results import ExerciseResult, SubmissionResult
from autograder.results import TestResult as Outcome
from tests.helpers import ROOT


def _result(name: str, failing: dict[str, tuple[str, str]]) -> SubmissionResult:
    """``failing`` maps a test to (its misconception key, its message)."""
    tests = [Outcome(nodeid=f"x::{t}", name=t, exercise="ex", max_points=1.0,
                     status="failed" if t in failing else "passed", points=0.0 if t in failing else 1.0,
                     misconception=failing.get(t, ("", ""))[0], message=failing.get(t, ("", ""))[1])
             for t in ("value", "view", "noise")]
    return SubmissionResult(submission=name, path=name, assignment="a", status="graded",
                            exercises=[ExerciseResult(id="ex", title="ex", tests=tests, max_points=3.0)])


SENTENCES = {"ignores_sigma": "the sigma argument is ignored"}


def test_a_key_or_a_registered_sentence_on_an_unknown_wrong_answer_fails_the_check():
    twin = _result(TWIN, {})
    keyed = {"perturbed": _result("p", {"value": ("sign_flipped", "wrong values")}), "nan": _result("n", {})}
    verdict = judge_unknown("ex", keyed, twin, SENTENCES)
    assert not verdict.ok and "perturbed: value [sign_flipped]" in verdict.detail
    unkeyed = {"perturbed": _result("p", {}),
               "nan": _result("n", {"noise": ("", "nan pixels: the sigma argument is ignored.")})}
    verdict = judge_unknown("ex", unkeyed, twin, SENTENCES)
    assert not verdict.ok and "nan: noise [ignores_sigma]" in verdict.detail


def test_a_key_the_values_unchanged_twin_receives_too_is_a_fact_of_the_wrapper_and_is_kept():
    copy = ("flatten_copies", "returned a copy")
    twin = _result(TWIN, {"view": copy})
    wrong = {"perturbed": _result("p", {"view": copy, "value": ("", "wrong values")}),
             "nan": _result("n", {"view": copy, "value": ("", "contains nan")})}
    verdict = judge_unknown("ex", wrong, twin, SENTENCES)
    assert verdict.ok, verdict.detail
    assert named_causes(wrong["nan"], "ex", SENTENCES) == {("view", "flatten_copies")}
    assert not judge_unknown("ex", {"perturbed": None, "nan": wrong["nan"]}, twin, SENTENCES).ok


# two exercises graded here, one whose answers are returned and one that answers in place (.grad); validate's
# own row checks every exercise of both assignments (tests/test_course_regression.py, tests/test_distributed.py)
@pytest.mark.parametrize("assignment, exercise", [("pytorch-fundamentals", "noisy_digits"),
                                                  ("pytorch-fundamentals", "accumulation")])
def test_the_courses_unknown_wrong_answers_are_told_no_cause(server, tmp_path, assignment, exercise):
    """Graded for real: on today's suites a NaN image was told "no_clamp", "one_noise_value" and
    "private_generator", and all-NaN gradients "unstable_exp": causes no value proved."""
    course = load_assignment(assignment, ROOT)
    made = {c.kind: c for c in cases(course, [exercise], tmp_path) if c.kind in POISONS}
    assert set(made) == {*WRONG_KINDS, TWIN}
    graded = grade(course, [made[k].path for k in (*WRONG_KINDS, TWIN)],
                   options=GradeOptions(exercises=[exercise]), server=server)
    results = {r.submission.split(SEP)[0]: r for r in graded}
    keys = read_suite_keys(course.exercise(exercise).hidden_tests)
    verdict = judge_unknown(exercise, {k: results[k] for k in WRONG_KINDS}, results[TWIN], keys.sentences)
    assert verdict.ok, verdict.detail
    if exercise == "noisy_digits":
        assert all(t.status != "passed" for t in results["nan"].exercise(exercise).tests
                   if t.name.startswith("Noisy images are clamped"))  # still caught, only without a cause
    if exercise == "accumulation":  # accumulate_gradients returns None: its .grad is poisoned in place
        reached, _ = per_test(exercise, {k: results[k] for k in WRONG_KINDS}, results[TWIN])
        assert sum(1 for t in results[TWIN].exercise(exercise).tests if t.status == "passed"
                   and t.name in reached and "grad" in t.name.lower()) >= 3, reached


def test_the_row_counts_the_tests_each_unknown_wrong_answer_reached():
    """Per test: each test the twin passes is either failed by a generated wrong answer (and checked to name no
    cause there) or named as not reached."""
    twin = _result(TWIN, {})
    wrong = {"perturbed": _result("p", {"value": ("", "wrong values")}),
             "nan": _result("n", {"value": ("", "contains nan"), "noise": ("", "nan pixels")})}
    verdict = judge_unknown("ex", wrong, twin, SENTENCES)
    assert verdict.ok and "2 of 3 test(s) failed by a generated wrong answer (not reached: view)" in verdict.detail
