"""One collection path: grading and the linter read a test's exercise and points the same way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.assignment import AssignmentError, load_assignment
from autograder.authoring.lint import lint_points
from autograder.grade import grade
from autograder.judge.collect import invoke_pytest
from autograder.options import GradeOptions
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


def test_a_judge_loads_no_installed_or_environment_plugin_but_hypothesis(server, tmp_path, monkeypatch):
    """Any package's pytest11 plugin (xdist here, anyio's imports trio) and PYTEST_PLUGINS used to join grading."""
    (tmp_path / "saboteur.py").write_text(
        "import pytest\n\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtest_call(item):\n"
        "    raise AssertionError('a plugin from the environment ran in the judge')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTEST_PLUGINS", "saboteur")
    a = load_assignment("demo", DEMO_COURSE)
    seen: list[str] = []

    class Names:
        @pytest.hookimpl(trylast=True)
        def pytest_configure(self, config: pytest.Config) -> None:
            seen.extend(name for name, _ in config.pluginmanager.list_name_plugin())

    code, output = invoke_pytest([a.exercise("basics").hidden_tests], DEMO_COURSE, [Names()], collect_only=True)
    assert code == 0, output
    assert "hypothesispytest" in seen and "saboteur" not in seen
    assert not [n for n in seen if n.startswith("xdist")], seen
    sub = tmp_path / "s.py"
    sub.write_text((DEMO_COURSE / "solutions/demo/basics/reference.py").read_text())
    (result,) = grade(a, [sub], server=server, options=GradeOptions(exercises=["basics"]))
    assert [t.status for e in result.exercises for t in e.tests] == ["passed"] * 3
    assert os.environ["PYTEST_PLUGINS"] == "saboteur" and "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
