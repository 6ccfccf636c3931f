"""An unusable ``--out`` (grade) or ``--data`` (serve) is one line naming the path and what to do, never a
traceback: a folder where the database file must go, no permission, a read-only file system, a full disk.

The commands run as a user would run them (the CLI, in a subprocess). A read-only or full file system is a
small tmpfs mounted in a private mount namespace (``unshare -m``: it vanishes with the command); no
permission is root without CAP_DAC_OVERRIDE (``setpriv``), since root ignores a folder's mode bits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

GRADE = ["grade", str(ROOT / "samples" / "alice.ipynb"), "--assignment", "pytorch-fundamentals", "--out"]
SERVE = ["serve", "--port", "1", "--data"]
CLI = [sys.executable, "-c", "from autograder.cli import run; run()"]


def _said(argv: list[str], prefix: tuple[str, ...] = ()) -> str:
    """The one line the command printed on stderr (it exits 2 and prints nothing else)."""
    p = subprocess.run([*prefix, *CLI, *argv], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    return lines[0]


def _in_namespace(script: str) -> str:
    """``script`` run by sh in a private mount namespace; its stderr (each command there exits 2)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("mounting a small tmpfs needs root and unshare(1)")
    p = subprocess.run(["unshare", "-m", "sh", "-ec", script], capture_output=True, text=True, timeout=240,
                       cwd=ROOT)
    if "mount:" in p.stderr or "unshare:" in p.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()[:200]}")
    return p.stderr


def _cli(argv: list[str]) -> str:
    return " ".join(f"'{a}'" for a in [*CLI, *argv]) + " || true"


def test_a_folder_where_the_database_file_must_go(tmp_path: Path):
    (tmp_path / "out" / "grades.sqlite").mkdir(parents=True)
    (tmp_path / "data" / "service.sqlite").mkdir(parents=True)
    line = _said([*GRADE, str(tmp_path / "out")])
    assert line == (f"torchgrader: {tmp_path}/out/grades.sqlite is a folder, where the database file must go: "
                    "move that folder away, or give --out another folder")
    assert _said([*SERVE, str(tmp_path / "data")]) == (
        f"torchgrader: {tmp_path}/data/service.sqlite is a folder, where the database file must go: move that "
        "folder away, or give --data another folder")


def test_no_permission(tmp_path: Path):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("run as a user without write permission needs root and setpriv(1) (root ignores modes)")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    no_dac = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")
    assert _said([*GRADE, str(locked / "out")], no_dac) == (
        f"torchgrader: cannot write to {locked}/out (Permission denied): give --out a folder you can write to")
    assert _said([*SERVE, str(locked / "data")], no_dac) == (
        f"torchgrader: cannot write to {locked}/data (Permission denied): give --data a folder you can write to")
    store = tmp_path / "store"
    store.mkdir()
    (store / "grades.sqlite").touch(mode=0o444)
    assert _said([*GRADE, str(store)], no_dac) == (
        f"torchgrader: no permission to write {store}/grades.sqlite: give --out a folder you can write to")


def test_a_read_only_file_system(tmp_path: Path):
    mnt = tmp_path / "ro"
    mnt.mkdir()
    err = _in_namespace(f"mount -t tmpfs -o ro,size=128k tg {mnt}\n{_cli([*GRADE, f'{mnt}/out'])}\n"
                        f"{_cli([*SERVE, f'{mnt}/data'])}")
    assert err.splitlines() == [
        f"torchgrader: cannot write to {mnt}/out (Read-only file system): give --out a folder you can write to",
        f"torchgrader: cannot write to {mnt}/data (Read-only file system): give --data a folder you can write to"]


def test_a_full_disk(tmp_path: Path):
    mnt = tmp_path / "full"
    mnt.mkdir()
    err = _in_namespace(f"mount -t tmpfs -o size=64k tg {mnt}\n"
                        f"dd if=/dev/zero of={mnt}/filler bs=1k count=200 2>/dev/null || true\n"
                        f"{_cli([*GRADE, str(mnt)])}\n{_cli([*SERVE, str(mnt)])}")
    assert err.splitlines() == [
        f"torchgrader: the disk holding {mnt}/grades.sqlite is full: free some space there, or give --out a "
        "folder on another disk",
        f"torchgrader: {mnt}/service.sqlite: the disk is full, so the store cannot be opened: free space on it, "
        "then start the service again"]
