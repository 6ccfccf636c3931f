"""Mutants as changes to their reference (issue 21, item 7): applied, checked, written, composed.

Nothing here grades: a change is plain text against plain text, and the static pass reports a change
that no longer fits its reference before anything runs.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.authoring.cases import compose
from autograder.authoring.change import ChangeMismatch, applied, is_change, read_hunks, tidied
from autograder.authoring.lint import changed_names, lint_assignment
from tests.helpers import DEMO_COURSE, ROOT

REFERENCE = "import torch\n\n\ndef double(x):\n    return x * 2\n\n\ndef row_means(x):\n    return x.mean(dim=1)\n"
HEAD = '"""Squares the values instead of doubling them."""\n# misconception: squares\n\n'


def _mutant(tmp_path: Path, change: str, reference: str = REFERENCE) -> tuple[Path, Path]:
    (tmp_path / "mutants").mkdir(exist_ok=True)
    ref = tmp_path / "reference.py"
    ref.write_text(reference)
    path = tmp_path / "mutants" / "squares.py"
    path.write_text(HEAD + f"CHANGE = r'''\n{change}'''\n")
    return path, ref


def test_a_change_replaces_the_lines_it_names_and_keeps_the_rest(tmp_path: Path):
    path, ref = _mutant(tmp_path, "@@ -5 +5 @@ def double(x):\n-    return x * 2\n+    return x * x\n"
                                  "@@ -9,0 +10,2 @@\n     return x.mean(dim=1)\n+\n+EPS = 1e-3\n")
    assert is_change(path.read_text()) and not is_change(REFERENCE)
    assert applied(path, ref) == REFERENCE.replace("x * 2", "x * x") + "\nEPS = 1e-3\n"
    assert [h.file_line for h in read_hunks(path)] == [5, 8]  # the lines of the `@@` headers in the file


def test_a_change_whose_lines_moved_still_applies_and_one_whose_lines_are_gone_names_file_hunk_and_remedy(
        tmp_path: Path):
    change = "@@ -5 +5 @@ def double(x):\n-    return x * 2\n+    return x * x\n"
    path, ref = _mutant(tmp_path, change, reference="# a comment the reference gained\n" + REFERENCE)
    assert "return x * x" in applied(path, ref)  # found one line further down, the only place it stands
    ref.write_text(REFERENCE.replace("x * 2", "2 * x"))
    with pytest.raises(ChangeMismatch) as e:
        applied(path, ref)
    message = str(e.value)
    assert message.startswith(f"{path}:5: hunk 1 (`@@ -5 +5 @@ def double(x):`) no longer matches {ref}")
    assert "line 5 reads `return 2 * x`" in message and "diff -U0 reference.py COPY" in message
    ref.write_text(REFERENCE + "\n\ndef triple(x):\n    return x * 2\n")
    path.write_text(path.read_text().replace("@@ -5 +5 @@", "@@ -1 +1 @@"))
    with pytest.raises(ChangeMismatch, match="stand in 2 places there, so the hunk needs a line of context"):
        applied(path, ref)


def test_a_change_that_is_not_a_diff_is_named_by_its_line(tmp_path: Path):
    path, ref = _mutant(tmp_path, "    return x * x\n")
    with pytest.raises(ChangeMismatch, match=r"squares.py:5: CHANGE must start with a hunk header"):
        applied(path, ref)
    path, ref = _mutant(tmp_path, "@@ -5 +5 @@\n*    return x * x\n")
    with pytest.raises(ChangeMismatch, match=r"squares.py:6: hunk 1 line .* starts with neither `-`"):
        applied(path, ref)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    dest = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_validate_reports_a_change_that_no_longer_fits_as_an_authoring_problem_not_a_traceback(course: Path):
    """validate's static pass (lint) lists it, by file and line, with what to do; nothing is graded."""
    ref = course / "solutions/demo/basics/reference.py"
    ref.write_text(ref.read_text().replace("return x * 2", "return x + x"))
    facts = lint_assignment(course, "demo")
    found = [p.format(course) for f in facts.values() for p in f.problems]
    assert [p for p in found if "squares.py" in p] == [
        "solutions/demo/basics/mutants/squares.py:5: hunk 1 (`@@ -5,1 +5,1 @@ def double(x):`) no longer matches "
        f"{ref}: it changes 1 line(s) starting `return x * 2`, and they stand nowhere in it (line 5 reads "
        "`return x + x`); the reference changed since this mutant was written. Write the change again against it "
        "(edit a copy of reference.py and paste `diff -U0 reference.py COPY` into CHANGE), or put the old lines "
        "back in the reference"], found


def test_a_change_mutant_is_composed_as_its_changed_reference_and_an_older_one_is_still_appended(course: Path,
                                                                                                 tmp_path: Path):
    demo = load_assignment("demo", course)
    basics = demo.exercise("basics")
    squares = basics.mutants_dir / "squares.py"
    text = compose(demo, {"basics": squares}, tmp_path / "s.py").read_text()
    chunk = text.split("# %% [basics]\n")[1].split("# %% [")[0]
    assert chunk.strip() == basics.reference.read_text().replace("x * 2", "x * x").strip()
    assert changed_names(basics.reference, squares) == ["double"]  # what a survivor's report names
    older = basics.mutants_dir / "cubes.py"
    older.write_text('"""Cubes."""\n# misconception: none\n\n\ndef double(x):\n    return x ** 3\n')
    chunk = compose(demo, {"basics": older}, tmp_path / "c.py").read_text().split("# %% [basics]\n")[1]
    chunk = chunk.split("# %% [")[0]
    assert chunk.startswith(basics.reference.read_text()) and chunk.rstrip().endswith("return x ** 3")


def test_tidy_rewrites_an_older_mutant_as_the_change_it_stood_for(course: Path):
    from autograder.authoring.scaffold import tidy_mutants

    basics = load_assignment("demo", course).exercise("basics")
    older = basics.mutants_dir / "cubes.py"
    older.write_text('"""Cubes."""\n# misconception: none\nimport math\nimport torch\n\n\n'
                     "def double(x):\n    # the mistake\n    return x ** 3\n\n\nHELPER = math.pi\n")
    assert tidy_mutants(course, "demo", ["basics"], out=lambda _: None) == 0
    text = older.read_text()
    assert is_change(text) and text.startswith('"""Cubes."""\n# misconception: none\n\nCHANGE = r')
    code = applied(older, basics.reference)
    assert code == ("import torch\n\n\ndef double(x):\n    # the mistake\n    return x ** 3\n\n\n"
                    "def row_means(x):\n    return x.mean(dim=1)\n\n\nimport math\n\n\nHELPER = math.pi\n")
    assert tidied(older, basics.reference)[0] == text  # a second tidy changes nothing


def test_every_mutant_of_the_course_is_a_change_that_applies_and_copies_no_six_reference_lines():
    """The conversion holds: a full-code mutant, or a hunk carrying six unchanged lines, shows up here."""
    checked = 0
    for course, assignment in ((ROOT, "pytorch-fundamentals"), (ROOT, "distributed-training"),
                               (DEMO_COURSE, "demo")):
        for ex in load_assignment(assignment, course).exercises:
            for path in ex.mutants():
                assert is_change(path.read_text()), f"{path}: not a change (`torchgrader tidy-mutants`)"
                ast.parse(applied(path, ex.reference))
                for h in read_hunks(path):
                    kept = [line for line in h.old if line in h.new]
                    assert len(kept) < 6, f"{path}: hunk {h.number} carries {len(kept)} unchanged lines"
                checked += 1
    assert checked > 200
