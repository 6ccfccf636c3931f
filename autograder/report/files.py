"""Every report file is written whole or not at all: a reader (or a resumed batch) never sees half a file."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from autograder.errors import OutputFolderError


def writable_folder(path: Path, option: str = "--out") -> Path:
    """``path`` made if missing and proven writable, before anything is graded or written into it.

    Failing here says which option to change; failing later (a database that cannot be opened, a report
    that cannot be written) would cost a whole batch's work and read as a traceback.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".torchgrader-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        reason = e.strerror or str(e)
        raise OutputFolderError(
            f"cannot write to {path} ({reason}): give {option} a folder you can write to"
            + (" (a file of that name is in the way)" if path.exists() and not path.is_dir() else "")
        ) from None
    return path


def database_error(path: Path, e: BaseException, option: str = "--out") -> OutputFolderError:
    """What a database that cannot be opened or created at ``path`` means, in one sentence that names the
    path and what to do (SQLite's own words say neither: "unable to open database file")."""
    path = Path(path)
    said = str(e).lower()
    if path.is_dir():
        why = f"{path} is a folder, where the database file must go: move that folder away, or give {option} " \
              "another folder"
    elif "full" in said or getattr(e, "errno", None) == errno.ENOSPC:
        why = f"the disk holding {path} is full: free some space there, or give {option} a folder on another disk"
    elif _read_only_fs(path) or getattr(e, "errno", None) == errno.EROFS:
        why = f"{path} is on a read-only file system: give {option} a folder you can write to"
    elif "readonly" in said or "permission" in said or getattr(e, "errno", None) in (errno.EACCES, errno.EPERM):
        why = f"no permission to write {path}: give {option} a folder you can write to"
    else:
        why = f"cannot open the database {path} ({str(e) or type(e).__name__}): give {option} a folder you can " \
              "write to"
    return OutputFolderError(why)


def _read_only_fs(path: Path) -> bool:
    """Whether the file system holding ``path`` (or its nearest existing folder) is mounted read-only."""
    for p in (path, *path.parents):
        if p.exists():
            try:
                return bool(os.statvfs(p).f_flag & os.ST_RDONLY)
            except OSError:
                return False
    return False


@contextmanager
def atomic_open(path: Path, *, newline: str | None = None) -> Iterator[TextIO]:
    """A text file that replaces ``path`` only when the block completes (a sibling ``.tmp`` until then)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        # backslashreplace: a lone surrogate that slipped past printable() cannot stop the file being written
        with open(tmp, "w", newline=newline, encoding="utf-8", errors="backslashreplace") as f:
            yield f
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> Path:
    with atomic_open(path) as f:
        f.write(text)
    return Path(path)
