"""One loader of the course's files: one layout, one schema per TOML file, read the same by loading and the linter."""

from __future__ import annotations

import ast
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


@pytest.mark.parametrize(("toml", "message"), [
    ('id = "demo"\ntitle = "T"\nexercises = ["basics", "counter"]\ndeadline = 1\n',
     "unknown key 'deadline' (known: id, title, exercises, conventions)"),
    ('id = "demo"\ntitle = 3\nexercises = ["basics", "counter"]\n', "`title` has the wrong type (int)"),
    ('id = "other"\ntitle = "T"\nexercises = ["basics", "counter"]\n', "id 'other' does not match its folder 'demo'"),
    ('id = "demo"\ntitle = "T"\nexercises = "basics"\n', "`exercises` must be a list of exercise ids"),
    ('id = "demo"\ntitle = "T"\n', "`exercises` must be a list of exercise ids"),
    ('id = "demo"\ntitle = "T\nexercises = []\n', "not valid TOML"),
])
def test_load_and_lint_refuse_the_same_assignment_toml_with_the_same_words(course: Path, toml: str, message: str):
    """One loader validates assignment.toml too: its schema is no longer the linter's alone."""
    path = course / "assignments/demo/assignment.toml"
    path.write_text(toml)
    with pytest.raises(AssignmentError) as e:
        load_assignment("demo", course)
    assert str(path) in str(e.value) and message in str(e.value)
    assert any(p.startswith("assignments/demo/assignment.toml") and message in p for p in _lint(course))


# ---------------------------------------------------------------------- one loader of the course's files
PACKAGE = Path(__file__).resolve().parent.parent / "autograder"
LOADER = "assignment.py"
# Modules that parse TOML that is not course material, each with its reason.
OTHER_TOML = {
    "service/config.py": "the submission service's own config file (`torchgrader serve --config`)",
    "authoring/wheel.py": "the package's pyproject.toml, for the wheel's metadata",
    "judge/torch_errors.py": "the judge's own table of what common PyTorch errors mean (torch_errors.toml)",
}


def _course_names() -> tuple[list[str], list[str]]:
    import autograder.assignment as a

    files = [a.ASSIGNMENT_TOML, a.EXERCISE_TOML, a.STATEMENT, a.STUB, a.PUBLIC_TESTS, a.REFERENCE, a.HIDDEN_TESTS,
             a.PROBES]
    folders = [a.PUBLIC_SIDE, a.HIDDEN_SIDE, a.MUTANTS_DIR, a.ALTERNATIVES_DIR, a.DATA_DIR]
    return files, folders


def course_file_spellings(source: str) -> list[tuple[int, str]]:
    """(line, what) of each place a module parses TOML or spells a course file's or folder's name itself.

    A name counts in any string but a docstring (messages too: they follow a rename), a folder as a path
    part: an operand of ``/``, a value compared with, ``mutants/`` inside a string, or ``solutions/`` that
    a path goes on from or into (``f"course/solutions/{id}"``). Prose about the course folder ("the folder holding
    assignments/ and solutions/") is left alone.
    """
    files, folders = _course_names()
    name = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, files)) + r")(?!\w)")
    case_dir = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, folders[2:4])) + r")/")
    sides = "|".join(map(re.escape, folders[:2]))
    side_path = re.compile(rf"(?<=/)({sides})/|(?<![\w.])({sides})/(?=[\w{{<])")
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import | ast.ImportFrom):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
            if any(m.split(".")[0] in ("tomllib", "tomli") for m in mods):
                out.append((n.lineno, "parses TOML"))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and (
                m := name.search(n.value) or case_dir.search(n.value) or side_path.search(n.value)):
            out.append((n.lineno, f"spells {m.group(0)!r}"))
        parts: list[ast.expr] = []
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div):
            parts = [n.left, n.right]
        elif isinstance(n, ast.Compare):
            parts = [x for c in n.comparators for x in (c, *getattr(c, "elts", ()))]
        out += [(n.lineno, f"spells the folder {p.value!r}") for p in parts
                if isinstance(p, ast.Constant) and p.value in folders]
    return sorted(set(out))


def test_only_the_loader_parses_course_toml_or_spells_a_course_file_name():
    """Everything asks autograder.assignment (CourseDir, ExerciseLayout, the loaders) for the course's files."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == LOADER:
            continue
        for line, what in course_file_spellings(path.read_text()):
            if not (what == "parses TOML" and rel in OTHER_TOML):
                found.append(f"autograder/{rel}:{line}: {what}")
    assert not found, "ask autograder.assignment instead:\n" + "\n".join(found)


def test_the_spelling_check_sees_each_way_of_spelling_a_name():
    source = '''"""Docstrings may say exercise.toml and solutions/ freely."""
import tomllib
from pathlib import Path

def f(course: Path, side: str) -> list:
    """reference.py, in a docstring, is prose."""
    if side in ("solutions", "assignments"):
        pass
    return [course / "solutions" / "x", f"see {course}/test_hidden.py", "--against mutants/x.py",
            "the folder holding assignments/ and solutions/", f"zip/assignments/{side}"]
'''
    assert set(course_file_spellings(source)) == {
        (2, "parses TOML"), (7, "spells the folder 'solutions'"), (7, "spells the folder 'assignments'"),
        (9, "spells the folder 'solutions'"), (9, "spells 'test_hidden.py'"), (9, "spells 'mutants/'"),
        (10, "spells 'assignments/'")}
