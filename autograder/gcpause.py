"""Importing without the garbage collector, for the processes that import torch to serve (server, worker, check).

Importing torch and torch._dynamo makes hundreds of thousands of objects that
live as long as the process, and the collector walks them over and over while
they are made: a large share of the time of those imports (figures in
docs/performance.md and CHANGELOG.md). Once they are in, they are frozen: no
later collection walks them again, and a forked sandbox does not copy their
pages by touching them. Grading itself runs with the collector on (the judge
resumes it before the first submission), and so does every sandbox; a
notebook kernel's ``check()`` never pauses it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_paused = False  # by pause(), and not resumed yet


def pause() -> None:
    """Stop collecting until :func:`resume` (the caller is about to import); a no-op if it is off already."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """After :func:`pause`: exempt everything made so far from later collections, and collect again.

    A no-op unless :func:`pause` turned the collector off: the judge calls it
    before its first submission in every process, a notebook kernel included.
    """
    global _paused
    if _paused:
        gc.freeze()
        gc.enable()
        _paused = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """:func:`pause`, then :func:`resume`: imports made inside are frozen, and are never collected again."""
    pause()
    try:
        yield
    finally:
        resume()
