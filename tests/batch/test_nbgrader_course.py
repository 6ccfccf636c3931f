"""A real nbgrader course in a temporary folder: generate_assignment, submissions in submitted/,
`torchgrader grade --nbgrader-db`, `nbgrader export`, the formgrader's own API, and generate_assignment --force."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.assignment import load_assignment
from autograder.authoring.notebook import build, split_cells
from autograder.authoring.release import release
from tests.helpers import DEMO_COURSE, ROOT

pytest.importorskip("nbgrader")
BIN = Path(sys.executable).parent


def nbgrader(course: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    # nbgrader runs its `alembic` command when it creates a gradebook: the venv's bin must be on PATH
    env = {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}
    env.pop("TORCHGRADER_COURSE", None)
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """source/ps1/ holds `torchgrader release`'s bundle; nbgrader generates the student version from it."""
    course = tmp_path_factory.mktemp("nbgrader") / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "demo-course"\nc.Execute.timeout = 300\n'
    )  # check cells start a sandbox
    release(load_assignment("demo", DEMO_COURSE), course / "source" / "ps1")
    p = nbgrader(course, "generate_assignment", "ps1")
    assert p.returncode == 0, p.stdout + p.stderr
    return course


def test_generate_assignment_keeps_every_stub_as_students_should_see_it(course: Path):
    released = nbformat.read(course / "release" / "ps1" / "demo.ipynb", as_version=4)
    code = "\n".join(c.source for c in released.cells if c.cell_type == "code")
    assert "BEGIN SOLUTION" not in code and "# YOUR CODE HERE" in code
    demo = load_assignment("demo", DEMO_COURSE)
    for ex in demo.exercises:  # every line of every stub but the `raise` lines survives
        for cell in split_cells(ex.stub.read_text()):
            for line in cell.splitlines():
                if line.strip() and "NotImplementedError" not in line:
                    assert line in code, f"{ex.id}: {line!r} was lost by generate_assignment"
    grade_cells = [
        c.metadata["nbgrader"]["grade_id"] for c in released.cells if c.metadata.get("nbgrader", {}).get("grade")
    ]
    assert grade_cells == ["basics", "counter"]


def test_nbgrader_validate_runs_the_public_checks(course: Path):
    p = nbgrader(course, "validate", str(course / "release" / "ps1" / "demo.ipynb"))
    out = p.stdout + p.stderr
    assert "Success! Your notebook passes all the tests." not in out and "VALIDATION FAILED ON 2 CELL(S)" in out
    assert "public test(s) of basics do not pass yet" in out, out[-3000:]
    assert "public test(s) of counter do not pass yet" in out


def _submit(course: Path, student: str, nb: nbformat.NotebookNode, stamp: str | None) -> None:
    d = course / "submitted" / student / "ps1"
    d.mkdir(parents=True)
    nbformat.write(nb, str(d / "demo.ipynb"))
    if stamp:
        (d / "timestamp.txt").write_text(stamp)


def test_torchgrader_scores_show_in_nbgraders_api_export_and_formgrader(course: Path, tmp_path: Path):
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config import Config

    demo = load_assignment("demo", DEMO_COURSE)
    _submit(course, "alice", build(demo, "reference"), "2024-02-01 10:00:00.123456 UTC")
    squares = demo.exercise("basics").mutants()[1]
    assert squares.stem == "squares"
    _submit(course, "bob", build(demo, "reference", swap={"basics": squares}), "2024-02-02 11:30:00.5 UTC")
    _submit(course, "carol", nbformat.read(course / "release" / "ps1" / "demo.ipynb", as_version=4), None)
    out = tmp_path / "out"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder.cli",
            "grade",
            str(course / "submitted"),
            "--assignment",
            "demo",
            "--course",
            str(DEMO_COURSE),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--progress",
            "plain",
            "--nbgrader-db",
            str(course / "gradebook.db"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "Warning" not in p.stdout + p.stderr  # no SQLAlchemy warnings on the console

    cfg = Config()
    cfg.CourseDirectory.root = str(course)
    api = NbGraderAPI(config=cfg)
    subs = {s["student"]: s for s in api.get_submissions("ps1")}
    assert {k: (s["autograded"], s["score"], s["max_score"]) for k, s in subs.items()} == {
        "alice": (True, 6.0, 6.0),
        "bob": (True, 5.0, 6.0),
        "carol": (True, 0.0, 6.0),
    }
    assert subs["bob"]["timestamp"].startswith("2024-02-02T11:30:00.5")
    notebooks = {s["student"]: s for s in api.get_notebook_submissions("ps1", "demo")}
    assert {k: s["score"] for k, s in notebooks.items()} == {"alice": 6.0, "bob": 5.0, "carol": 0.0}
    for student in ("alice", "bob", "carol"):  # the formgrader opens these
        assert (course / "autograded" / student / "ps1" / "demo.ipynb").is_file()

    p = nbgrader(course, "export")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").read_text().splitlines())}
    assert {k: (float(r["score"]), float(r["max_score"])) for k, r in rows.items()} == {
        "alice": (6.0, 6.0),
        "bob": (5.0, 6.0),
        "carol": (0.0, 6.0),
    }

    p = nbgrader(course, "generate_assignment", "ps1", "--force")  # the grade cells were there from the start
    assert p.returncode == 0, p.stdout + p.stderr
