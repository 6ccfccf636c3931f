"""Every report file is written whole or not at all: a reader (or a resumed batch) never sees half a file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def atomic_open(path: Path, *, newline: str | None = None) -> Iterator[TextIO]:
    """A text file that replaces ``path`` only when the block completes (a sibling ``.tmp`` until then)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", newline=newline, encoding="utf-8") as f:
            yield f
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> Path:
    with atomic_open(path) as f:
        f.write(text)
    return Path(path)
