"""One collection path: grading and the linter read a test's exercise and points the same way."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.assignment import AssignmentError, load_assignment
from autograder.authoring.lint import lint_points
from autograder.grade import grade
from tests.helpers import DEMO_COURSE


@pytest.fixture
def bad_points_course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    hidden = course / "solutions/demo/basics/test_hidden.py"
    hidden.write_text(hidden.read_text() + '\n\n@pytest.mark.points("two")\ndef test_worded_points(student):\n'
                                           '    """worded"""\n')
    return course


def test_a_points_mark_that_is_not_a_number_is_named_by_grading_and_by_the_linter(server, bad_points_course, tmp_path):
    """Grading used to crash on float("two") with no file named; now both name the test and its line."""
    a = load_assignment("demo", bad_points_course)
    line = next(i for i, ln in enumerate(a.exercise("basics").hidden_tests.read_text().splitlines(), 1)
                if "def test_worded_points" in ln) - 1  # pytest reports the decorator's line
    _, problems = lint_points(a)
    worded = [p for p in problems if p.message == "test_worded_points: points('two') is not a number"]
    assert len(worded) == 1 and worded[0].path.name == "test_hidden.py" and abs(worded[0].line - line) <= 1
    sub = tmp_path / "s.py"
    sub.write_text((bad_points_course / "solutions/demo/basics/reference.py").read_text())
    with pytest.raises(AssignmentError, match=r"test_hidden.py:\d+: test_worded_points: points\('two'\) is not a"):
        grade(a, [sub], server=server)
