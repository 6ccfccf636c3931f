"""Issue 43: validate's forgery cases, and advice that no point rests on.

A forgery case (``solutions/<a>/<ex>/forgeries/NAME.py``) is the honest mistake of a mutant with an advice
test's evidence forged; validate grades it beside that mutant and fails when it earns more. Here: the rule on
synthetic results, and the course's own forgeries are well formed (fast: nothing is graded).
"""

from __future__ import annotations

import ast
import re

import pytest

from autograder.assignment import load_assignment
from autograder.authoring.cases import SEP, Case
from autograder.authoring.forgery import FORGERY, advised, forgery_cases, judge_forgery, twin_of
from autograder.results import ExerciseResult, SubmissionResult, TestResult
from tests.helpers import ROOT


def _result(name, tests):
    return SubmissionResult(submission=name, path=name, assignment="a", status="graded",
                            exercises=[ExerciseResult(id="ex", title="ex", tests=tests, max_points=2.0)])


def _t(name, points, max_points, status="passed", misconception=""):
    return TestResult(nodeid=f"x::{name}", name=name, exercise="ex", max_points=max_points, points=points,
                      status=status, misconception=misconception)


def test_a_forgery_that_buys_a_point_fails_and_one_that_does_not_passes(tmp_path):
    src = tmp_path / "forged.py"
    src.write_text("# twin: honest\ndef f():\n    return 1\n")
    case = Case(f"{FORGERY}{SEP}ex{SEP}forged", FORGERY, "ex", src)
    honest = _result("honest", [_t("values", 1, 1), _t("how", 0, 1, "failed")])
    paid = _result("forged", [_t("values", 1, 1), _t("how", 1, 1)])
    _, ok, detail = judge_forgery(case, paid, {f"mutant{SEP}ex{SEP}honest": honest})
    assert not ok and "FORGED" in detail and "how" in detail, detail
    advice = _result("forged", [_t("values", 1, 1), _t("how", 0, 0)])
    _, ok, detail = judge_forgery(case, advice, {f"mutant{SEP}ex{SEP}honest": honest})
    assert ok, detail
    _, ok, detail = judge_forgery(case, advice, {})
    assert not ok and "twin" in detail


def test_a_mutant_only_advice_sees_is_advised_when_the_advice_names_its_own_key(tmp_path):
    src = tmp_path / "by_hand.py"
    src.write_text("# misconception: by_hand\ndef f():\n    return 1\n")
    said = _result("m", [_t("values", 1, 1), _t("uses autograd", 0, 0, "failed", "by_hand")])
    assert "advised" in advised(src, said, "ex")
    other = _result("m", [_t("values", 1, 1), _t("uses autograd", 0, 0, "failed", "other_key")])
    assert advised(src, other, "ex") is None


def _in_process_tests(ex):
    tree = ast.parse(ex.hidden_tests.read_text())
    return {fn.name for fn in tree.body if isinstance(fn, ast.FunctionDef)
            and any("in_process" in ast.unparse(d) for d in fn.decorator_list)}


def _forged_tests(source):
    """The advice tests a forgery declares it forges (``# forges: NAME[, NAME...]``)."""
    m = re.search(r"^#\s*forges:\s*(.+?)\s*$", source.read_text(), re.M)
    return [n.strip() for n in m.group(1).split(",") if n.strip()] if m else []


@pytest.mark.parametrize("assignment_id", ["pytorch-fundamentals", "distributed-training"])
def test_the_courses_forgeries_name_a_mutant_twin_and_a_test_of_their_exercise(tmp_path, assignment_id):
    """Every advice test of the course has a forgery case, and each case names a mutant twin (issue 43)."""
    assignment = load_assignment(assignment_id, ROOT)
    found = forgery_cases(assignment, None, tmp_path)
    assert found
    for case in found:
        ex = assignment.exercise(case.exercise)
        twin = twin_of(case.source)
        assert twin and (ex.mutants_dir / f"{twin}.py").is_file(), (case.source, twin)
        forges = _forged_tests(case.source)
        names = {fn.name for fn in ast.parse(ex.hidden_tests.read_text()).body if isinstance(fn, ast.FunctionDef)}
        assert forges and set(forges) <= names, (case.source, forges)
        assert case.path.is_file() and ex.reference.read_text().splitlines()[0] in case.path.read_text()
    forged = {(c.exercise, t) for c in found for t in _forged_tests(c.source)}
    for ex in assignment.exercises:
        missing = _in_process_tests(ex) - {t for e, t in forged if e == ex.id}
        assert not missing, (ex.id, "advice without a forgery case", missing)
