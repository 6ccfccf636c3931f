"""``torchgrader try``'s lines: public tests carry no points, so they are not printed as "PASS 0/0"."""

from __future__ import annotations

from autograder.authoring.trial import report
from autograder.results import SubmissionResult


def _result(max_points: float) -> SubmissionResult:
    tests = [{"nodeid": f"t{i}", "name": f"test {i}", "exercise": "e", "max_points": max_points,
              "points": max_points if i else 0, "status": "passed" if i else "failed", "message": "m"}
             for i in range(3)]
    return SubmissionResult.from_dict({"submission": "s", "path": "x", "assignment": "a", "status": "graded",
                                       "exercises": [{"id": "e", "title": "E", "max_points": 3 * max_points,
                                                      "tests": tests}]})


def test_public_tests_print_pass_and_fail_without_points():
    lines: list[str] = []
    assert report(_result(0), "e", show_feedback=False, out=lines.append) == 1
    assert lines[0].split() == ["FAIL", "test", "0"] and lines[1].split() == ["PASS", "test", "1"]
    assert "0/0" not in "\n".join(lines) and lines[-1] == "  2 of 3 tests pass on e (these tests carry no points)"


def test_hidden_tests_still_print_their_points():
    lines: list[str] = []
    report(_result(2), "e", show_feedback=False, out=lines.append)
    assert lines[1].split()[:2] == ["PASS", "2/2"] and lines[-1] == "  4/6 points on e"
