"""A sandbox that cannot start never yields a grade: every command stops before a result is stored.

The kernel's refusals are made to happen here in two ways: the real mount call refused in the
probe (monkeypatched ``mount`` of the /proc step, as Docker's masked /proc makes the kernel do),
and TORCHGRADER_TEST_REFUSE_STEP, which refuses one named set-up step inside every sandbox and the
probe, so the CLI's own processes meet it. Docker's real refusal is in tests/docker/.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.errors import SandboxCannotStart, WorkerFatal, meaning
from autograder.sandbox import isolation, preflight
from tests.helpers import DEMO_COURSE, ROOT

REF = (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()


def _cli(*args: str, step: str) -> subprocess.CompletedProcess:
    env = {**os.environ, isolation.TEST_REFUSE: step}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env=env)


def _stored(out: Path) -> int:
    if not (out / "grades.sqlite").exists():
        return 0
    with sqlite3.connect(out / "grades.sqlite") as db:
        return db.execute("select count(*) from results").fetchone()[0]


def test_the_probe_runs_the_real_set_up_and_names_the_refused_step(monkeypatch):
    real_mount = isolation.mount

    def mount(src, target, fstype, flags, data=None):
        if fstype == "proc":  # what the kernel answers inside Docker without systempaths=unconfined
            raise isolation.IsolationError(errno.EPERM, f"mount {target}: Operation not permitted")
        return real_mount(src, target, fstype, flags, data)

    monkeypatch.setattr(isolation, "mount", mount)
    found = preflight.probe()
    assert found.refused is not None and found.refused.step == "/proc"
    assert "Operation not permitted" in found.refused.reason
    said = preflight.message(found.refused)
    assert "/proc" in said and "Operation not permitted" in said and "nothing is graded" in said
    docker = preflight.advice("/proc", found.refused.reason, engine="docker")
    assert "--security-opt systempaths=unconfined" in docker and "--allow-unisolated" in docker
    # the option is grade's alone: the advice names that command, which check, try and validate readers can run
    from autograder.cli import build_parser

    assert "`torchgrader grade --allow-unisolated`" in docker
    assert build_parser().parse_args(["grade", "x", "--assignment", "a", "--out", "o", "--allow-unisolated"])
    assert "--security-opt unmask=ALL" in preflight.advice("/proc", "", engine="podman")


@pytest.mark.parametrize("step", ["/proc", "private root"])
def test_grade_stops_before_any_result_and_exits_non_zero(tmp_path, step):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    out = tmp_path / "out"
    p = _cli("grade", str(subs), "--out", str(out), "--assignment", "demo", "--course", str(DEMO_COURSE),
             "--jobs", "1", "--progress", "plain", step=step)
    assert p.returncode != 0
    assert f"the kernel refused its {step}" in p.stderr and "Operation not permitted" in p.stderr
    assert "To fix it:" in p.stderr and "Traceback" not in p.stderr
    assert _stored(out) == 0 and not (out / "alice").exists()
    assert not (out / "gradebook.csv").exists() or len((out / "gradebook.csv").read_text().splitlines()) <= 1


def test_check_and_try_stop_with_the_step_and_exit_non_zero(tmp_path):
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    for args in (["check", str(sub), "--assignment", "demo", "--course", str(DEMO_COURSE)],
                 ["try", "demo", "basics", "--course", str(DEMO_COURSE)]):
        p = _cli(*args, step="/proc")
        assert p.returncode == meaning(SandboxCannotStart).exit == 2, (args, p.stdout, p.stderr)  # docs/errors.md
        assert "the kernel refused its /proc" in p.stderr and "Traceback" not in p.stderr
        assert "passed" not in p.stdout and "/6" not in p.stdout  # no score of any kind was printed


def test_grade_in_process_raises_and_stores_nothing(monkeypatch, tmp_path):
    """The sandbox's own report (not the probe's): step, kernel's words and its traceback reach the judge."""
    from autograder.assignment import load_assignment
    from autograder.grade import grade
    from autograder.sandbox.client import SandboxCannotStart

    monkeypatch.setenv(isolation.TEST_REFUSE, "/proc")
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    got = []
    with pytest.raises(SandboxCannotStart) as e:
        grade(load_assignment("demo", DEMO_COURSE), [sub], on_result=got.append)
    assert got == []
    assert e.value.step == "/proc" and "Operation not permitted" in e.value.reason
    assert "Traceback" in e.value.traceback and "build_root" in e.value.traceback  # the sandbox's own traceback


def test_validate_stops_where_it_grades_isolated(tmp_path):
    p = _cli("validate", "demo", "--course", str(DEMO_COURSE), "--quick", step="/proc")
    assert p.returncode == meaning(SandboxCannotStart).exit == meaning(WorkerFatal).exit == 2, (p.stdout, p.stderr)
    assert "the kernel refused its /proc" in p.stderr and "To fix it:" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout


def test_the_docs_say_which_steps_stop_grading_and_which_are_reported():
    """docker/README.md's table is isolation's own split of the set-up steps (one source, checked)."""
    text = (ROOT / "docker" / "README.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ")}
    words = {"/proc": "its `/proc`", "private root": "private root", "resource limits": "resource limits",
             "privileges": "dropped privileges", "namespaces": "namespaces", "loopback": "loopback",
             "cgroup": "cgroup", "seccomp": "seccomp"}
    for step in isolation.FATAL_STEPS + isolation.REPORTED_STEPS:
        row = next((r for name, r in rows.items() if words[step] in name), None)
        assert row is not None, f"docker/README.md's table has no row for {step!r}"
        if step in isolation.FATAL_STEPS:
            assert "**stops**" in row
        elif step != "namespaces":  # refused namespaces stop too, unless --allow-unisolated (a reported state then)
            assert "reported" in row and "stops" not in row


def test_a_sandbox_that_dies_before_the_first_cell_grades_nothing(tmp_path):
    """Dying while the probes load (before any student code): never a student's zero, the run stops."""
    import shutil

    from autograder.assignment import load_assignment
    from autograder.grade import grade
    from autograder.sandbox.client import SandboxCannotStart

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    (course / "solutions/demo/counter/probes.py").write_text("import os\nos._exit(3)\n")
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    got = []
    with pytest.raises(SandboxCannotStart) as e:
        grade(load_assignment("demo", course), [sub], on_result=got.append)
    assert got == [] and "before the first cell of alice" in e.value.message and "'counter'" in e.value.message
