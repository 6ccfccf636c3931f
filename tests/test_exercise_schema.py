"""One exercise layout and one exercise.toml schema: loading and the linter read the same rules."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from autograder.assignment import EXERCISE_KEYS, AssignmentError, ExerciseLayout, load_assignment
from autograder.authoring.lint import lint_assignment
from tests.helpers import DEMO_COURSE


@pytest.fixture
def course(tmp_path: Path) -> Path:
    dest = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _lint(course: Path) -> list[str]:
    return [p.format(course) for f in lint_assignment(course, "demo").values() for p in f.problems]


@pytest.mark.parametrize(("toml", "message"), [
    ('id = "basics"\ntitle = "T"\ntimeout = 3\n', "`points` is missing"),
    ('id = "basics"\ntitle = "T"\npoints = "4"\ntimeout = 3\n', "`points` has the wrong type (str)"),
    ('id = "basics"\ntitle = "T"\npoints = 0\ntimeout = 3\n', "`points` must be positive"),
    ('id = "basics"\ntitle = "T"\npoints = 4\ntimeout = 3\ngpu = 1\n', "`gpu` has the wrong type (int)"),
    ('id = "basics"\ntitle = "T"\npoints = 4\ntimeout = 3\nweight = 2\n', "unknown key 'weight'"),
    ('id = "other"\ntitle = "T"\npoints = 4\ntimeout = 3\n', "id 'other' does not match its folder 'basics'"),
])
def test_load_and_lint_refuse_the_same_exercise_toml_with_the_same_words(course: Path, toml: str, message: str):
    """No silent default: a toml without points used to grade the exercise out of 10."""
    path = course / "assignments/demo/basics/exercise.toml"
    path.write_text(toml)
    with pytest.raises(AssignmentError) as e:
        load_assignment("demo", course)
    assert str(path) in str(e.value) and message in str(e.value)
    assert any(p.startswith("assignments/demo/basics/exercise.toml") and message in p for p in _lint(course))


def test_the_loaded_exercise_is_its_layout_and_its_declared_values(course: Path):
    ex = load_assignment("demo", course).exercise("basics")
    lay = ExerciseLayout.of(course.resolve(), "demo", "basics")
    assert (ex.stub, ex.hidden_tests, ex.probes, ex.toml) == (lay.stub, lay.hidden_tests, lay.probes, lay.toml)
    assert ex.hidden_tests.parents[2].name == "solutions" and ex.stub.parents[2].name == "assignments"
    assert (ex.points, ex.timeout, ex.gpu) == (4.0, 3.0, EXERCISE_KEYS["gpu"].default)


def test_every_exercise_toml_key_is_documented_in_the_authoring_guide():
    from tests.helpers import ROOT

    text = (ROOT / "docs" / "authoring.md").read_text()
    missing = [k for k in EXERCISE_KEYS if k != "id" and not re.search(rf"^{k} = ", text, re.M)]
    assert not missing, f"docs/authoring.md's exercise.toml example lacks {missing}"
