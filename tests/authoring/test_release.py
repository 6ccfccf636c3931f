"""`torchgrader release`: the student bundle, nbgrader metadata, and no staff-only material anywhere in it."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.assignment import Assignment, AssignmentError, load_assignment
from autograder.authoring.notebook import build
from autograder.authoring.release import find_leaks, release
from autograder.grade import GradeOptions, grade
from autograder.session import Budget
from tests.helpers import DEMO_COURSE, ROOT


def staff_snippets(a: Assignment) -> list[tuple[str, str]]:
    """(origin, text) for every function body in references, alternatives, mutants, probes and hidden tests.

    Computed here independently of the release module: each body's source lines, stripped, minus the
    lines that are also in the public material (code a stub gives students).
    """
    public = set()
    for ex in a.exercises:
        for p in (ex.stub, ex.public_tests, ex.statement):
            if p.is_file():
                public |= {ln.split("  #")[0].strip() for ln in p.read_text().splitlines()}
    out = []
    for ex in a.exercises:
        files = [ex.reference, ex.hidden_tests, *ex.alternatives(), *ex.mutants()]
        files += [ex.probes] if ex.probes.is_file() else []
        for f in files:
            src = f.read_text()
            lines = src.splitlines()
            for node in ast.walk(ast.parse(src)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    body = node.body[1:] if ast.get_docstring(node) and len(node.body) > 1 else node.body
                    text = [ln.split("  #")[0].strip() for ln in lines[body[0].lineno - 1:body[-1].end_lineno]]
                    distinctive = [ln for ln in text if ln and ln not in public and not ln.startswith("#")]
                    if distinctive:
                        out.append((f"{f.relative_to(a.course)}:{node.lineno}", "\n".join(distinctive)))
    return out


def bundle_text(out: Path) -> dict[Path, str]:
    """Every file of the bundle as stripped lines; notebooks as their cells' sources."""
    texts = {}
    for p in out.rglob("*"):
        if p.is_file() and p.suffix != ".whl":
            raw = p.read_text()
            if p.suffix == ".ipynb":
                raw = "\n".join(c.source for c in nbformat.reads(raw, as_version=4).cells)
            texts[p] = "\n" + "\n".join(ln.split("  #")[0].strip() for ln in raw.splitlines()) + "\n"
    return texts


def assert_no_leaks(out: Path, a: Assignment) -> None:
    names = {p.name for p in out.rglob("*")}
    assert not names & {"reference.py", "test_hidden.py", "probes.py", "alternatives", "mutants", "solutions"}
    texts = bundle_text(out)
    snippets = staff_snippets(a)
    assert len(snippets) > 10
    lines = {p: set(text.split("\n")) for p, text in texts.items()}
    for origin, snippet in snippets:
        first = snippet.split("\n", 1)[0]
        for p, text in texts.items():  # whole lines (a set lookup of the first before the search)
            assert first not in lines[p] or f"\n{snippet}\n" not in text, f"{p} contains the body of {origin}"
    assert find_leaks(out, a) == []


@pytest.mark.parametrize("course,assignment_id", [(DEMO_COURSE, "demo"), (ROOT, "pytorch-fundamentals")])
def test_the_bundle_has_the_student_material_and_nothing_staff_only(tmp_path: Path, course, assignment_id):
    a = load_assignment(assignment_id, course)
    out = tmp_path / "bundle"
    release(a, out)
    nb = nbformat.read(out / f"{assignment_id}.ipynb", as_version=4)
    nbformat.validate(nb)
    assert (out / "HOWTO.md").read_text().count(f"{assignment_id}.ipynb") >= 2
    assert len(list(out.glob("torchgrader-*-py3-none-any.whl"))) == 1
    for ex in a.exercises:
        for f in ("exercise.toml", "statement.md", "public_test.py"):
            assert (out / "assignments" / assignment_id / ex.id / f).read_text() == (ex.public_dir / f).read_text()
    # each statement under the heading written from exercise.toml's title (its one place), numbered in order
    for number, ex in enumerate(a.exercises, start=1):
        heading = f"## {number}. {ex.title} (`{ex.id}`)\n\n"
        assert heading + ex.statement.read_text().strip() in [c.source for c in nb.cells]
    # the released folder is a course `torchgrader check` can load (without any hidden material)
    assert load_assignment(assignment_id, out, need_hidden=False).ids == a.ids
    assert_no_leaks(out, a)


def test_notebook_cells_carry_nbgrader_metadata_and_one_check_cell_per_exercise(demo):
    nb = build(demo)
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
    assert len(ids) == len(set(ids))
    for c in nb.cells:
        meta = c.metadata["nbgrader"]
        assert {"grade_id", "solution", "locked", "grade", "schema_version"} <= set(meta)
        assert not (meta["solution"] and meta["locked"])  # nbgrader: a solution cell is editable
        if c.cell_type == "markdown":
            assert meta["locked"] and not meta["solution"]
    # one grade cell per exercise, named after it, carrying its points: the check cell
    checks = [c for c in nb.cells if c.metadata["nbgrader"]["grade"]]
    assert [c.source.splitlines()[-1] for c in checks] == ['check("basics")', 'check("counter")']
    assert [(c.metadata["nbgrader"]["grade_id"], c.metadata["nbgrader"]["points"]) for c in checks] == [
        ("basics", demo.exercise("basics").points), ("counter", demo.exercise("counter").points)]
    assert all(c.metadata["nbgrader"]["locked"] and not c.metadata["nbgrader"]["solution"] for c in checks)
    solution = [c for c in nb.cells if c.metadata["nbgrader"]["solution"]]
    assert solution and all(c.cell_type == "code" for c in solution)
    # nbgrader replaces only what lies between the delimiters: the stub's signatures stay
    for c in solution:
        assert "### BEGIN SOLUTION" in c.source and "### END SOLUTION" in c.source
    assert "    ### BEGIN SOLUTION\n    raise NotImplementedError\n    ### END SOLUTION" in solution[0].source
    assert nb.metadata["torchgrader"] == {"assignment": "demo"}


def test_a_graded_notebook_with_check_cells_loses_nothing(tmp_path: Path, server, demo):
    """Check cells are no-ops in the sandbox: one printed line, no cell error, full marks."""
    path = tmp_path / "full.ipynb"
    nbformat.write(build(demo, "reference"), str(path))
    r = grade(demo, [path], server=server, options=GradeOptions(budget=Budget(cell_seconds=10)))[0]
    assert r.total == r.max_total == 6
    assert all(c.status == "ok" for c in r.cells)
    assert r.output.count("skipped: this code is being graded") == 2


def test_leaks_are_found_and_a_non_empty_folder_is_refused(tmp_path: Path, demo):
    out = tmp_path / "bundle"
    release(demo, out)
    with pytest.raises(AssignmentError, match="not empty"):
        release(demo, out)
    shutil.copyfile(demo.exercise("basics").mutants()[0], out / "notes.txt")
    nb = nbformat.read(out / "demo.ipynb", as_version=4)
    nb.cells[2].source = demo.exercise("counter").reference.read_text()
    nbformat.write(nb, str(out / "demo.ipynb"))
    (out / "probes.py").write_text("# nothing\n")
    leaks = find_leaks(out, demo)
    assert "probes.py: a staff-only file name" in leaks
    assert any(x.startswith("notes.txt: contains solutions/demo/basics/mutants/") for x in leaks)
    assert "demo.ipynb: contains solutions/demo/counter/reference.py:2 (def __init__)" in leaks
    with pytest.raises(AssignmentError, match="staff-only material"):
        release(demo, out, force=True)


def test_release_from_the_command_line_needs_the_material_that_passed_validate(tmp_path: Path, capsys):
    from autograder.authoring.stamp import write_stamp
    from autograder.cli import main

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__", ".torchgrader-*"))
    out = tmp_path / "b"
    args = ["release", "demo", "--course", str(course), "--out", str(out)]
    assert main(args) == 2
    assert "demo has not passed `torchgrader validate demo`; releasing unvalidated material needs --unvalidated" \
        in capsys.readouterr().err
    assert not out.exists()
    write_stamp(course, "demo", "full")  # what a passing `validate demo` writes
    assert main(args) == 0
    assert "checked for staff-only material (none found)" in capsys.readouterr().out
    assert json.loads((out / "demo.ipynb").read_text())["metadata"]["torchgrader"]["assignment"] == "demo"
    # any change since (here a hidden test) needs validate again, or an explicit override
    hidden = course / "solutions/demo/basics/test_hidden.py"
    hidden.write_text(hidden.read_text() + "\n")
    assert main([*args, "--force"]) == 2
    assert "demo changed since it last passed validate" in capsys.readouterr().err
    assert main([*args, "--force", "--unvalidated"]) == 0
    assert "release demo: UNVALIDATED, released anyway (--unvalidated): demo changed since" in capsys.readouterr().err


def test_an_exercise_data_folder_is_released(tmp_path: Path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    data = course / "assignments/demo/counter/data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "numbers.csv").write_text("1,2,3\n")
    out = tmp_path / "bundle"
    release(load_assignment("demo", course), out)
    assert (out / "data/counter/sub/numbers.csv").read_text() == "1,2,3\n"
    assert "data" not in {p.name for p in (out / "assignments/demo/counter").iterdir()}


def test_a_pass_is_kept_per_exercise_and_release_asks_only_for_the_changed_ones(tmp_path: Path, server, capsys):
    """issue 26, item 14: `validate --exercise X` records X's pass; after one exercise changes, release needs only
    that exercise validated again; a change to the engine invalidates every pass."""
    from autograder.authoring.stamp import stamp_path
    from autograder.authoring.validate import validate
    from autograder.cli import main

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__", ".torchgrader-*"))
    args = ["release", "demo", "--course", str(course), "--out", str(tmp_path / "b"), "--force"]
    quiet: list[str] = []
    assert validate("demo", course, ["basics"], server=server, jobs=1, out=quiet.append, repeats=1) == 0, quiet
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "counter: never validated" in err and "--exercise counter`" in err and "basics:" not in err, err
    assert validate("demo", course, ["counter"], server=server, jobs=1, out=quiet.append, repeats=1) == 0, quiet
    assert main(args) == 0, capsys.readouterr().err
    capsys.readouterr()
    hidden = course / "solutions/demo/counter/test_hidden.py"  # one exercise edited: only it is asked for
    hidden.write_text(hidden.read_text() + "\n")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "counter: changed since its pass of" in err and "validate demo --exercise counter`" in err, err
    assert "basics" not in err, err
    assert validate("demo", course, ["counter"], server=server, jobs=1, out=quiet.append, repeats=1) == 0, quiet
    assert main(args) == 0
    record = json.loads(stamp_path(course, "demo").read_text())
    assert sorted(record["exercises"]) == ["basics", "counter"]
    record["exercises"]["basics"]["engine"] = "an older grader"
    stamp_path(course, "demo").write_text(json.dumps(record))
    assert main(args) == 2
    assert "basics: the grader itself changed since its pass" in capsys.readouterr().err


def test_release_names_the_course_server_for_submit(tmp_path: Path, demo):
    """`release --server URL`: the notebook's metadata names the service; no token is anywhere in the bundle."""
    release(demo, tmp_path / "b", server="https://grader.example.edu/")
    nb = json.loads((tmp_path / "b" / "demo.ipynb").read_text())
    assert nb["metadata"]["torchgrader"] == {"assignment": "demo", "server": "https://grader.example.edu"}
