"""The sandbox server of ``torchgrader grade``, started as the command starts, before it knows what it grades.

The server's ``import torch`` is the longest step of grading one notebook from
cold, and the command spends a third of a second first on its own imports, its
arguments, the assignment and the submissions, while a core sits idle. Started
here, the server imports during that time. Which exercises are graded (and so
whether the first sandbox needs the compiler) is known only later: the backend
that adopts the server (:meth:`ProcessBackend._shared_server`) says so in its
first request (server.serve). Nothing adopts it when the batch grades in
containers or on Dask, has nothing to grade, or stops on an error:
:func:`discard` closes it then, and it stops importing at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.sandbox.client import SandboxServer

_started: list[SandboxServer] = []  # the one server started and not yet adopted, if any


def start() -> None:
    """Start the server now (once); :func:`take` adopts it, :func:`discard` closes it."""
    if not _started:
        from autograder.sandbox.client import SandboxServer

        try:
            _started.append(SandboxServer(warm_compiler=False))
        except OSError:  # no process to be had now: the backend starts its own later, and says why it cannot
            pass


def take() -> SandboxServer | None:
    """The server :func:`start` started, now the caller's to close; None when none waits."""
    return _started.pop() if _started else None


def discard() -> None:
    """Close the server no one adopted (it stops importing: nothing of it is used)."""
    server = take()
    if server is not None:
        server.close()
