"""One answer to "which files are this assignment's material", shared by the validate stamp,
the material shipped to workers elsewhere and the Gradescope autograder."""

from pathlib import Path

from autograder.assignment import is_material, material_files
from autograder.authoring.stamp import material_digest
from autograder.batch import material


def _course(tmp_path: Path) -> Path:
    files = {
        "assignments/a/assignment.toml": "x",
        "assignments/a/ex/stub.py": "def f(): ...",
        "assignments/a/ex/data/numbers.csv": "1,2",
        "assignments/a/ex/.ipynb_checkpoints/stub-checkpoint.py": "old",
        "solutions/a/ex/test_hidden.py": "def test(): ...",
        "solutions/a/ex/probes.py": "",
        "solutions/a/ex/reference.py": "def f(): return 1",
        "solutions/a/ex/mutants/off_by_one.py": "def f(): return 2",
        "solutions/a/ex/alternatives/loop.py": "def f(): return 1",
        "solutions/a/ex/__pycache__/test_hidden.cpython-311.pyc": "bytes",
        "solutions/a/.torchgrader-validated.json": "{}",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "solutions/a/ex/link.py").symlink_to(tmp_path / "solutions/a/ex/reference.py")
    return tmp_path


def test_grading_material_leaves_out_staff_files_caches_dot_files_and_links(tmp_path):
    course = _course(tmp_path)
    every = {f"{side}/{rel.as_posix()}" for _, side, rel in material_files(course, "a")}
    assert every == {
        "assignments/assignment.toml",
        "assignments/ex/stub.py",
        "assignments/ex/data/numbers.csv",
        "solutions/ex/test_hidden.py",
        "solutions/ex/probes.py",
        "solutions/ex/reference.py",
        "solutions/ex/mutants/off_by_one.py",
        "solutions/ex/alternatives/loop.py",
    }
    shipped = {arc for _, arc in material.files(course, "a")}
    assert shipped == {
        "assignments/a/assignment.toml",
        "assignments/a/ex/stub.py",
        "assignments/a/ex/data/numbers.csv",
        "solutions/a/ex/test_hidden.py",
        "solutions/a/ex/probes.py",
    }
    # The Gradescope export asks the same question of a path inside the hidden side.
    assert not is_material(Path("mutants/off_by_one.py"), staff=False)
    assert is_material(Path("mutants/off_by_one.py"), staff=True)
    assert not is_material(Path("__pycache__/x.pyc"))


def test_the_stamp_sees_a_new_mutant_but_not_a_cache_or_its_own_file(tmp_path):
    course = _course(tmp_path)
    before = material_digest(course, "a")
    (course / "solutions/a/ex/__pycache__/probes.cpython-311.pyc").write_text("new cache")
    (course / "solutions/a/.torchgrader-validated.json").write_text('{"digest": "changed"}')
    assert material_digest(course, "a") == before
    (course / "solutions/a/ex/mutants/sign.py").write_text("def f(): return -1")
    assert material_digest(course, "a") != before


def test_only_the_hidden_side_has_staff_only_files(tmp_path):
    """A public data folder that happens to be called like a staff folder still ships to workers."""
    course = _course(tmp_path)
    (course / "assignments/a/ex/alternatives").mkdir()
    (course / "assignments/a/ex/alternatives/hint.md").write_text("public")
    shipped = {arc for _, arc in material.files(course, "a")}
    assert "assignments/a/ex/alternatives/hint.md" in shipped
    assert "solutions/a/ex/alternatives/loop.py" not in shipped


def test_the_suite_version_of_the_shipped_material_is_the_courses(tmp_path):
    """A worker elsewhere (Dask, a container) computes the suite version of the material it was sent; the
    service compares it with its own before each job. A staff-only file counted in the version but never
    shipped (a mutation record, a forgery case) made them differ, so the service restarted its Dask or
    container worker before every job: a burst graded at a third of the batch's pace."""
    from autograder.assignment import load_assignment
    from autograder.batch.store import suite_version
    from tests.helpers import ROOT

    for assignment in ("pytorch-fundamentals", "distributed-training"):
        here = load_assignment(assignment, ROOT)
        staged = material.stage(ROOT, assignment, tmp_path / assignment)
        assert any((ROOT / "solutions" / assignment).rglob("mutation.toml"))  # the case this is about
        assert suite_version(load_assignment(assignment, staged)) == suite_version(here), assignment
