"""Students' `check`: from the command line, and from inside a notebook executed by nbclient."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.assignment import load_assignment
from autograder.authoring.notebook import build
from autograder.authoring.release import release
from autograder.checker import assignment_for, check_report, grade_public, history_notebook
from autograder.load import load
from tests.helpers import DEMO_COURSE


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The demo assignment as students get it (no hidden material)."""
    out = tmp_path_factory.mktemp("bundle")
    release(load_assignment("demo", DEMO_COURSE), out, force=True)
    return out


def _half_done(bundle: Path) -> Path:
    """basics solved (reference code), counter still the stub."""
    a = load_assignment("demo", DEMO_COURSE)
    nb = build(a, "reference", swap={"counter": a.exercise("counter").stub})
    path = bundle / "demo.ipynb"
    nbformat.write(nb, str(path))
    return path


def test_check_from_the_command_line(bundle: Path):
    nb = _half_done(bundle)
    env = {k: v for k, v in os.environ.items() if k != "TORCHGRADER_COURSE"}
    p = subprocess.run([sys.executable, "-m", "autograder.cli", "check", nb.name], cwd=bundle, env=env,
                       capture_output=True, text=True, timeout=300)
    out = p.stdout
    assert p.returncode == 1, p.stdout + p.stderr  # a public test still fails
    assert "basics — Tensor basics: 1/1 public tests pass (all pass)" in out
    assert "counter — A stateful object: 0/1 public tests pass (1 to fix)" in out
    assert "[ERROR] Counter(3).total is 3" in out and "not implemented yet" in out
    assert "1 public test(s) to fix" in out
    assert "1 of 2 exercises pass; 1 public test(s) to fix" in out  # the exercises, not only the tests (item 5)
    assert "Traceback" not in out + p.stderr


def test_check_from_inside_a_notebook_executed_by_nbclient(bundle: Path):
    """The check cells grade the code the kernel has run, in the sandbox, and print per-exercise feedback."""
    from nbclient import NotebookClient

    nb = nbformat.read(_half_done(bundle), as_version=4)
    # an extra cell that breaks nothing the tests need, and is reported by its In [n]
    nb.cells.insert(3, nbformat.v4.new_code_cell("oops = undefined_name"))
    NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(bundle)}}).execute()
    outputs = {}
    for c in nb.cells:
        if c.cell_type == "code" and "check(" in c.source:
            outputs[c.source.splitlines()[-1]] = "".join(o.get("text", "") for o in c.outputs)
    basics, counter = outputs['check("basics")'], outputs['check("counter")']
    assert "basics — Tensor basics: 1/1 public tests pass (all pass)" in basics
    assert "All public tests pass." in basics
    assert "! cell 2 (`oops = undefined_name`) error" in basics and "NameError" in basics  # In [2] is the broken cell
    assert "(cell numbers are the In [N] execution counts of this kernel)" in basics
    assert "counter — A stateful object: 0/1 public tests pass (1 to fix)" in counter
    assert "`Counter.__init__` is not implemented yet" in counter
    # only the exercise asked for is checked
    assert "counter" not in basics.split("Cells that")[0] and "basics —" not in counter


def test_kernel_history_becomes_a_notebook_whose_cell_numbers_are_execution_counts(tmp_path: Path):
    history = ["", "import torch", "def double(x):\n    return 2 * x", "%time double(torch.ones(2))", ""]
    sub = load(history_notebook(history, tmp_path / "h.ipynb", "demo"))
    assert [c.index for c in sub.cells] == [1, 2, 3, 4]
    assert "neutralised" in sub.cells[2].source  # IPython syntax is never run
    assert load(history_notebook([""], tmp_path / "e.ipynb", "demo")).cells[0].source == "pass"


def test_the_assignment_is_found_from_the_exercise_id(tmp_path: Path, server):
    assert assignment_for("basics", DEMO_COURSE) == "demo"
    assert assignment_for(None, DEMO_COURSE) == "demo"
    with pytest.raises(Exception, match="no assignment"):
        assignment_for("nope", DEMO_COURSE)
    a = load_assignment("demo", DEMO_COURSE, need_hidden=False, only=["basics"])
    ref = DEMO_COURSE / "solutions/demo/basics/reference.py"
    r = grade_public(ref, a, ["basics"], server=server)
    assert [(e.id, e.points, [t.status for t in e.tests]) for e in r.exercises if e.tests] == [
        ("basics", 0.0, ["passed"])]
    assert "1/1 public tests pass (all pass)" in check_report(r)


def test_outside_the_bundle_check_speaks_the_students_situation(tmp_path: Path, bundle: Path, monkeypatch, capsys):
    import autograder

    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("TORCHGRADER_COURSE", raising=False)
    autograder.check("basics")  # in Jupyter: one line that says where the tests are and how to point at them
    out = capsys.readouterr().out
    assert "could not run: the public tests were not found" in out
    assert "HOWTO.md and assignments/" in out and 'course="path/to/that/folder"' in out
    assert "solutions/" not in out and "--course" not in out
    env = {k: v for k, v in os.environ.items() if k != "TORCHGRADER_COURSE"}
    copy = elsewhere / "demo.ipynb"  # the notebook saved away from its bundle
    copy.write_text((bundle / "demo.ipynb").read_text())
    p = subprocess.run([sys.executable, "-m", "autograder.cli", "check", "demo.ipynb"], cwd=elsewhere, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "--course path/to/that/folder" in p.stderr and "solutions/" not in p.stderr
    # the notebook inside its bundle is found from anywhere
    p = subprocess.run([sys.executable, "-m", "autograder.cli", "check", str(bundle / "demo.ipynb"),
                        "--exercise", "basics"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert "basics — Tensor basics" in p.stdout, p.stdout + p.stderr


def test_the_howto_installs_the_data_extra(bundle: Path):
    howto = (bundle / "HOWTO.md").read_text()
    assert "[data]\"" in howto and "pip install \"./torchgrader-" in howto
    assert "torchgrader check" in howto and "nbgrader validate" in howto


def test_under_nbgrader_autograde_a_check_cell_never_passes_for_free(monkeypatch):
    import autograder

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(RuntimeError, match="torchgrader grade"):
        autograder.check("basics")


def test_a_mistyped_exercise_lists_the_real_ids_and_suggests_the_closest(bundle: Path, tmp_path: Path, capsys):
    """issue 26, item 4: the lookup runs on the whole assignment, never on the list already narrowed to the typo."""
    import autograder
    from autograder.cli import main

    nb = _half_done(bundle)
    for argv in (["check", str(nb), "--exercise", "basic", "--course", str(bundle)],
                 ["grade", str(nb), "--assignment", "demo", "--out", str(tmp_path / "out"), "--exercise", "basic",
                  "--course", str(DEMO_COURSE)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "demo has no exercise 'basic'. Did you mean 'basics'? Its exercises are: basics, counter." in err, err
    autograder.check("countr", course=str(bundle))  # in Jupyter: found from the id, across every assignment
    out = capsys.readouterr().out
    assert "has an exercise 'countr'. Did you mean 'counter'? The exercises are: basics, counter." in out, out
    autograder.check("countr", assignment="demo", course=str(bundle))
    assert "Did you mean 'counter'?" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()  # nothing was graded


def test_a_check_cell_run_before_its_code_cell_says_to_run_that_cell_first(bundle: Path, tmp_path: Path,
                                                                          monkeypatch):
    """issue 26, item 1: in a real kernel the check cell runs before the cell that defines the function; the
    saved notebook has that cell, so the student is told to run it (cell N), not that nothing defines it."""
    from nbclient import NotebookClient

    here = tmp_path / "bundle"
    shutil.copytree(bundle, here, ignore=shutil.ignore_patterns("*.ipynb"))
    a = load_assignment("demo", DEMO_COURSE)
    nb = build(a, "reference", swap={"counter": a.exercise("counter").stub})
    code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "def double" in c.source)
    check_cell = next(i for i, c in enumerate(nb.cells) if 'check("basics")' in c.source)
    nb.cells.insert(code, nb.cells.pop(check_cell))  # the check cell now comes first: the slip, reproduced
    nb.cells.insert(0, nbformat.v4.new_code_cell("seed = 0"))  # every cell counts in "cell N"
    path = here / "demo.ipynb"
    nbformat.write(nb, str(path))  # saved as Jupyter saves it, with the code cell the kernel has not reached
    defining = 1 + next(i for i, c in enumerate(nb.cells) if "def double" in c.source)  # cell N, 1-based
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)  # found from the kernel's folder, as in a bare kernel
    monkeypatch.delenv("TORCHGRADER_COURSE", raising=False)
    # the kernel stops at the check cell: what it has run is everything above, the code cell is not run
    run = nbformat.v4.new_notebook(cells=nb.cells[:defining - 1], metadata=nb.metadata)
    assert 'check("basics")' in run.cells[-1].source
    NotebookClient(run, timeout=240, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(here)}}).execute()
    out = "".join(o.get("text", "") for o in run.cells[-1].outputs)
    assert f"`double` is not defined in this kernel yet: run the cell that defines it (cell {defining} of " \
           "demo.ipynb, `def double(x)`) first" in out, out
    assert "No cell of your submission defines it" not in out, out


def test_a_name_no_cell_defines_keeps_saying_check_the_spelling(server):
    from autograder.checker import explain_unrun
    from autograder.judge.proxy import NO_CELL_DEFINES
    from autograder.results import ExerciseResult, SubmissionResult, TestResult

    msg = "`dubble` is not defined. Define it at the top level of a code cell, with exactly this name." + \
        NO_CELL_DEFINES
    r = SubmissionResult(submission="h", path="h.ipynb", assignment="demo", exercises=[ExerciseResult(
        "basics", "Tensor basics", 4, tests=[TestResult("n", "double", "basics", 1, message=msg)])])
    explain_unrun(r, None)
    text = r.exercises[0].tests[0].message
    assert "no cell this kernel has run defines it" in text and "check the spelling" in text, text


def test_away_from_linux_check_says_what_it_cannot_and_what_it_can_do(bundle: Path, monkeypatch, capsys):
    """issue 26, item 3: on macOS or Windows, check() runs nothing, says why plainly and lists what is left to write."""
    import autograder
    from autograder.cli import main

    nb = _half_done(bundle)  # basics written, counter still the stub
    monkeypatch.setattr(sys, "platform", "darwin")
    autograder.check(notebook=str(nb), course=str(bundle))
    out = capsys.readouterr().out
    assert "check() cannot run the public tests on macOS" in out and "Linux-only isolation" in out, out
    assert "WSL 2 on Windows" in out and "graded on the course's Linux grader either way" in out
    assert "  counter: still to write: Counter" in out, out
    assert "  basics: every function its public tests call is written (double, row_means)" in out, out
    monkeypatch.setattr(sys, "platform", "win32")
    assert main(["check", str(nb), "--course", str(bundle)]) == 2
    out = capsys.readouterr().out
    assert "torchgrader check cannot run the public tests on Windows" in out and "counter: still to write" in out
    assert "Traceback" not in out


def test_the_howto_pins_torch_and_warns_about_the_other_autograder(bundle: Path):
    from importlib.metadata import version

    howto = (bundle / "HOWTO.md").read_text()
    pinned = version("torch").split("+")[0]
    assert f"pip install torch=={pinned} --index-url https://download.pytorch.org/whl/cpu" in howto
    assert "python3 -m venv .venv" in howto and "jupyterlab" in howto
    assert "Do **not** `pip install autograder`" in howto and "No module named 'autograder'" in howto
    assert "python -m ipykernel install --user --name torchgrader-demo" in howto
    assert "**Linux**" in howto and "On macOS or Windows itself, `check()`" in howto


def _shared_site() -> str:
    """This interpreter's site-packages folders, one a line: a .pth file that lends them to a new environment.

    Only as plain folders on sys.path (their own .pth files, this checkout's editable install among them, are
    not run), and after the new environment's own site-packages: the checker installed there wins.
    """
    sites = [Path(e).resolve() for e in sys.path if Path(e).name == "site-packages" and Path(e).is_dir()]
    # last first: where one environment lends its packages to another through a .pth (as this project's
    # worktrees do), the lender's are the complete set (setuptools new enough for torch's metadata)
    return "".join(f"{s}\n" for s in reversed(sites))


def test_a_fresh_virtual_environment_set_up_by_the_howto_runs_the_check_cells(bundle: Path, tmp_path: Path):
    """issue 26, item 3: the HOWTO's own commands, run in a new venv, give a kernel whose check cells work.

    torch is not downloaded again: the new environment sees this one's packages through a .pth file (the
    and pip with it), and each `pip install` of the HOWTO runs with --no-index, so a step that would need the
    network fails here instead of fetching. The checker is installed from the bundle's wheel, as students do.
    """
    import re

    here = tmp_path / "bundle"
    shutil.copytree(bundle, here)
    nb = nbformat.read(_half_done(here), as_version=4)
    where = "import autograder; print('FROM', getattr(autograder, '__file__', ''))"  # ('' in the sandbox)
    nb.cells.insert(0, nbformat.v4.new_code_cell(where))
    nbformat.write(nb, str(here / "demo.ipynb"))
    howto = (here / "HOWTO.md").read_text()
    commands = [ln.strip() for ln in howto.splitlines() if ln.startswith("       ") and ln.strip()]
    assert commands[0] == "python3 -m venv .venv" and commands[1].startswith("source .venv/bin/activate")
    venv = here / ".venv"
    # without its own pip and setuptools (older than torch asks for): this environment's serve, through the .pth
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=300)
    py = venv / "bin" / "python"
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz_shared.pth").write_text(_shared_site())
    home = tmp_path / "home"
    home.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("TORCHGRADER_", "VIRTUAL_ENV", "PYTHON"))},
           "HOME": str(home), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pips = [c for c in commands if c.startswith("pip install")]
    assert len(pips) == 2 and re.search(r"pip install torch==\d+\.\d+", pips[0]) and "jupyterlab" in pips[1]
    for cmd in pips:
        p = subprocess.run(f"{py} -m {cmd} --no-index", shell=True, cwd=here, env=env, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, cmd + "\n" + p.stdout[-3000:] + p.stderr[-3000:]
    kernel = next(c for c in commands if "ipykernel install" in c)
    p = subprocess.run(f"{py} {kernel.removeprefix('python ')}", shell=True, cwd=here, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    run = ("import nbformat, sys\nfrom nbclient import NotebookClient\n"
           "nb = nbformat.read('demo.ipynb', as_version=4)\n"
           "NotebookClient(nb, timeout=240, kernel_name='torchgrader-demo', allow_errors=True,"
           " resources={'metadata': {'path': '.'}}).execute()\n"
           "print('\\n'.join(''.join(o.get('text', '') for o in c.outputs)"
           " for c in nb.cells if c.cell_type == 'code'))")
    p = subprocess.run([str(py), "-c", run], cwd=here, env=env, capture_output=True, text=True, timeout=600)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr[-3000:]
    assert f"FROM {site}" in out, out  # the kernel's autograder is the bundle's wheel, in the new environment
    assert "basics — Tensor basics: 1/1 public tests pass (all pass)" in out, out
    assert "counter — A stateful object: 0/1 public tests pass (1 to fix)" in out, out
