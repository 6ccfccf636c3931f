"""The sandbox as an ordinary user sees it: user namespaces instead of root.

TAs and students do not run the grader as root. This test creates an
unprivileged account and grades through the CLI as that user, including a
hostile submission, and checks the protections report says what is active.
"""

from __future__ import annotations

import os
import pwd
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import DEMO_COURSE, ROOT, run_if

USER = "torchgrader-test"


def _ensure_user() -> None:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            [
                shutil.which("useradd") or "/usr/sbin/useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                USER,
            ],
            check=True,
            capture_output=True,
        )


def _as_user(*cmd: str, **kw) -> subprocess.CompletedProcess:
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "PYTHONPATH": os.pathsep.join([str(ROOT), *site.getsitepackages()]),
    }
    return subprocess.run(
        [shutil.which("runuser") or "/usr/sbin/runuser", "-u", USER, "--", *cmd],
        capture_output=True,
        text=True,
        env=env,
        **kw,
    )


def _python_for_user() -> str | None:
    """This interpreter if the user can run it, else the system's one of the same version.

    (A pyenv Python under /root is not reachable by other users; the system
    CPython of the same minor version runs the same wheels.)
    """
    v = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for exe in (sys.executable, f"/usr/bin/{v}", f"/usr/local/bin/{v}"):
        if os.path.exists(exe) and _as_user(exe, "-c", "import torch, autograder").returncode == 0:
            return exe
    return None


@run_if(root=True, command="runuser")
def test_grading_as_an_ordinary_user_uses_user_namespaces():
    _ensure_user()
    if _as_user("test", "-r", str(ROOT / "autograder" / "cli.py")).returncode != 0:
        pytest.skip(f"{ROOT} is not readable by an ordinary user on this machine")
    python = _python_for_user()
    if python is None:
        pytest.skip(
            f"no Python {sys.version_info.major}.{sys.version_info.minor} with torch is usable by an ordinary user here"
        )
    work = Path(tempfile.mkdtemp(prefix="tg-unpriv-"))
    os.chmod(work, 0o777)
    ref = (
        (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
        + "\n# %%\n"
        + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
    )
    (work / "honest.py").write_text(ref)
    counter = (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
    (work / "hunter.py").write_text(
        "import os\nSEEN = sorted(os.listdir('/'))\n"
        "def double(x):\n    return str(SEEN) + str(os.getuid())\n"
        "# %%\ndef row_means(x):\n    return x.mean(dim=1)\n# %%\n" + counter
    )
    for f in work.iterdir():
        os.chmod(f, 0o644)
    out = work / "out"
    proc = _as_user(
        python,
        "-m",
        "autograder.cli",
        "grade",
        str(work / "honest.py"),
        str(work / "hunter.py"),
        "--assignment",
        "demo",
        "--course",
        str(DEMO_COURSE),
        "--out",
        str(out),
        cwd=str(ROOT),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "user namespace" in proc.stdout, proc.stdout
    assert "isolated (own network namespace, loopback only: nothing else reachable)" in proc.stdout
    assert "NOT isolated" not in proc.stdout
    assert "honest: 6 / 6" in proc.stdout
    assert "hunter: 4 / 6" in proc.stdout  # its other exercises still count
    assert (out / "gradebook.csv").exists()
