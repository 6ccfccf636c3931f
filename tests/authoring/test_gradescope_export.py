"""`torchgrader export-gradescope`: the zip's run_autograder grades a submission laid out as Gradescope lays it out."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.assignment import AssignmentError, load_assignment
from autograder.authoring.gradescope_export import ROOT_ENV, export, pick_submission
from autograder.authoring.notebook import build
from tests.helpers import DEMO_COURSE


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "autograder.zip"
    export(load_assignment("demo", DEMO_COURSE), out)
    return out


def test_the_zip_holds_setup_run_the_wheel_and_only_what_grading_needs(autograder_zip: Path):
    with zipfile.ZipFile(autograder_zip) as z:
        names = set(z.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in setup
    wheel = next(n for n in names if n.endswith("-py3-none-any.whl"))
    assert f"{wheel}[data]" in setup
    assert 'ROOT="${TORCHGRADER_AUTOGRADER_ROOT:-/autograder}"' in run
    assert "-m autograder.authoring.gradescope_export run" in run
    for f in ("course/assignments/demo/assignment.toml", "course/assignments/demo/basics/public_test.py",
              "course/solutions/demo/basics/test_hidden.py", "course/solutions/demo/counter/probes.py"):
        assert f in names
    staff = [n for n in names if n.endswith("reference.py") or "/mutants/" in n or "/alternatives/" in n]
    assert staff == []


def test_the_bundled_wheel_installs_with_pip(autograder_zip: Path, tmp_path: Path):
    with zipfile.ZipFile(autograder_zip) as z:
        wheel = next(n for n in z.namelist() if n.endswith(".whl"))
        z.extract(wheel, tmp_path)
    target = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                        str(target), str(tmp_path / wheel)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert (target / "autograder" / "authoring" / "gradescope_export.py").is_file()
    assert (target / "autograder" / "judge" / "torch_errors.toml").is_file()  # the modules' data files too
    assert (target / "bin" / "torchgrader").is_file()
    meta = next(target.glob("torchgrader-*.dist-info")) / "METADATA"
    assert "Requires-Dist: torch" in meta.read_text()


def _gradescope_root(tmp_path: Path, autograder_zip: Path) -> Path:
    """/autograder as Gradescope lays it out: source/ (the zip), run_autograder, submission/, results/."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root


def test_run_autograder_grades_a_sample_submission_into_results_json(autograder_zip: Path, tmp_path: Path):
    root = _gradescope_root(tmp_path, autograder_zip)
    a = load_assignment("demo", DEMO_COURSE)
    # the reference notebook, except one mutant: `double` squares, so one hidden test (1 point) fails
    nb = build(a, "reference", swap={"basics": a.exercise("basics").mutants()[1]})
    assert a.exercise("basics").mutants()[1].stem == "squares"
    nbformat.write(nb, str(root / "submission" / "my_work.ipynb"))
    env = {**os.environ, ROOT_ENV: str(root), "TORCHGRADER_PYTHON": sys.executable}
    env.pop("TORCHGRADER_COURSE", None)
    p = subprocess.run(["bash", str(root / "run_autograder")], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 5
    tests = {t["name"]: t for t in results["tests"]}
    assert len(tests) == 5 and sum(t["max_score"] for t in tests.values()) == 6
    assert tests["basics: double(x) doubles every entry"]["score"] == 0
    assert "squared" in tests["basics: double(x) doubles every entry"]["output"]
    # the messages are Markdown (`code`, lists): Gradescope renders them only when told so
    assert results["output_format"] == results["test_output_format"] == "md"
    assert {t["output_format"] for t in tests.values()} == {"md"}
    assert "Sandbox protections:" in p.stdout and "graded my_work.ipynb: 5/6" in p.stdout
    if os.geteuid() == 0:  # the hidden material is root-only, out of the sandbox uid's reach
        mode = (root / "source" / "course" / "solutions" / "demo" / "basics" / "test_hidden.py").stat().st_mode
        assert stat.S_IMODE(mode) & 0o077 == 0


def test_a_missing_notebook_gives_a_results_json_that_says_so(autograder_zip: Path, tmp_path: Path):
    from autograder.authoring.gradescope_export import grade_on_gradescope

    root = _gradescope_root(tmp_path, autograder_zip)
    (root / "submission" / "notes.txt").write_text("forgot the notebook")
    data = grade_on_gradescope(root, "demo")
    assert data["score"] == 0 and "no notebook was submitted (found: notes.txt)" in data["output"]
    assert json.loads((root / "results" / "results.json").read_text()) == data


def test_the_submitted_notebook_is_picked_by_name_or_alone(tmp_path: Path):
    (tmp_path / "a.ipynb").write_text("{}")
    assert pick_submission(tmp_path, "demo").name == "a.ipynb"
    (tmp_path / "b.ipynb").write_text("{}")
    with pytest.raises(AssignmentError, match="several .ipynb files"):
        pick_submission(tmp_path, "demo")
    (tmp_path / "demo.ipynb").write_text("{}")
    assert pick_submission(tmp_path, "demo").name == "demo.ipynb"


def test_setup_picks_an_interpreter_that_runs_and_says_which(autograder_zip: Path, tmp_path: Path):
    with zipfile.ZipFile(autograder_zip) as z:
        setup = z.read("setup.sh").decode()
    # Run setup.sh up to its choice of interpreter (the rest installs torch from the network).
    head = setup[:setup.index('"$PY" -m venv')]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "python3.13"  # a pyenv shim for a version that is not installed
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    (bin_dir / "python3.11").symlink_to(sys.executable)
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    (tmp_path / "setup_head.sh").write_text(head)
    p = subprocess.run(["/bin/bash", str(tmp_path / "setup_head.sh")], env={"PATH": str(bin_dir)},
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"skipping {shim}: it does not run" in p.stdout
    version = ".".join(map(str, sys.version_info[:3]))
    assert f"setup.sh: using {bin_dir / 'python3.11'} ({version})" in p.stdout
