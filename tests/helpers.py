"""Shared test helpers: one skip helper with a visible reason, and grading shortcuts."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_COURSE = ROOT / "tests" / "course"


@cache
def _docker_ok() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@cache
def _cuda_ok() -> bool:
    import torch

    return torch.cuda.is_available()


def run_if(*, root: bool = False, cuda: bool = False, docker: bool = False, command: str | None = None):
    """A skipif marker whose reason says exactly what is missing (Lightning's RunIf idea)."""
    reasons = []
    if root and os.geteuid() != 0:
        reasons.append("needs root (to create an unprivileged test user)")
    if cuda and not _cuda_ok():
        reasons.append("needs a CUDA GPU (torch.cuda.is_available() is False)")
    if docker and not _docker_ok():
        reasons.append("needs a running Docker engine (`docker info` failed)")
    if command and not shutil.which(command):
        reasons.append(f"needs the `{command}` command")
    return pytest.mark.skipif(bool(reasons), reason="; ".join(reasons) or "ok")


def build_submission(dest: Path, *parts: Path | str) -> Path:
    """Concatenate code files (or literal code) into a .py submission, one cell each."""
    chunks = []
    for p in parts:
        text = Path(p).read_text() if isinstance(p, Path) else p
        chunks.append("# %%\n" + text)
    dest.write_text("\n\n".join(chunks) + "\n")
    return dest


def processes_named(name: str) -> list[int]:
    """Host pids whose command name is ``name``: what hostile code left running (a daemon, a rank)."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == name:
                    out.append(int(pid))
            except OSError:
                pass
    return out


def children_of(pid: int) -> list[int]:
    """The living processes whose parent is ``pid`` (zombies left out)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry))
    return out


def wait_until(done: Callable[[], object], seconds: float, step: float = 0.05) -> bool:
    """Poll ``done`` until it is true or ``seconds`` have passed; whether it came true."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def until(cond: Callable[[], object], timeout: float, what: str, step: float = 0.1):
    """Poll ``cond`` until it returns something true, and return that; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def preloaded(sb) -> tuple[bool, bool]:
    """(torch._dynamo, sklearn) already imported in a fresh sandbox (a client ``Sandbox``), before any cell
    imported them: what its server had imported, or warmed up, when it forked it."""
    sb.request(
        "exec", "import sys\nWARM = ('torch._dynamo' in sys.modules, 'sklearn' in sys.modules)", cell=1, timeout=60
    )
    return tuple(sb.request("getattr", target=None, name="WARM", timeout=30)[1])
