"""What to import ahead of grading, as each exercise declares it: a speed hint, never what a grade depends on.

torch._dynamo is a second of imports that torch.compile, torch.export and an
optimizer's first step (torch.optim imports it there) would otherwise pay in
the middle of a test, in every sandbox and in the judge. An exercise whose
suites or probes do any of that says so in its ``exercise.toml``
(``warm_dynamo = true``, validated by :mod:`autograder.assignment` with every
other key). The declaration is static because the sandbox server starts before
pytest collects a suite. When it is wrong, grading is slower, never different:
whatever needs the module imports it itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.assignment import Assignment, Exercise
from autograder.options import GradeOptions

if TYPE_CHECKING:
    from autograder.sandbox.client import SandboxServer


def chosen(assignment: Assignment, exercises: list[str] | None) -> list[Exercise]:
    """The exercises a grading call selects (all of them when ``exercises`` is empty)."""
    return [assignment.exercise(e) for e in exercises] if exercises else list(assignment.exercises)


def warm_dynamo(assignment: Assignment, exercises: list[str] | None = None) -> bool:
    """Whether a selected exercise declares ``warm_dynamo``: its suites or probes compile or build an optimizer."""
    return any(ex.warm_dynamo for ex in chosen(assignment, exercises))


def start_server(assignment: Assignment, options: GradeOptions,
                 started: SandboxServer | None = None, env: dict[str, str] | None = None) -> SandboxServer:
    """A sandbox server for these exercises, started now: it imports torch while the caller imports the judge.

    With an exercise that declares ``warm_dynamo``, the server imports torch._dynamo before the first
    sandbox and warms it up once for later ones, so each sandbox's first compile or optimizer step is cheap.
    ``started``: a server started before the exercises were known (sandbox/prestart.py), used when it is
    still running; it learns whether to warm the compiler from its owner's first attach or fork.
    ``env``: variables the new server (and so its sandboxes) gets besides the clean set (a worker's device).
    """
    from autograder.sandbox.client import SandboxServer

    warm = warm_dynamo(assignment, options.exercises)
    if started is not None:
        if started.proc is not None and started.proc.poll() is None:
            started.warm_compiler = warm
            return started
        started.close()
    return SandboxServer(warm_compiler=warm, env=env)


def import_judge_dynamo(assignment: Assignment, options: GradeOptions) -> None:
    """Import torch._dynamo in the judge now, before collection, when a selected exercise declares ``warm_dynamo``.

    Otherwise torch.optim imports it at an optimizer's first use: a second in
    the middle of grading, during which the sandbox waits. A thread that
    imported it meanwhile held the judge's interpreter lock through the first
    exercises, and the module locks their checks needed (``torch.autograd.grad``
    imports part of it): slower than importing it here, while the sandbox
    server, which imports it too for the same exercises, is not ready yet anyway.
    A grading worker has put :mod:`autograder.judge.lazy_dynamo`'s stand-in in its place by now, so
    there this costs nothing; the judges that share a process with others (``check()`` in a kernel,
    ``validate -j 1``) import the real one.
    """
    if warm_dynamo(assignment, options.exercises):
        try:
            import torch._dynamo  # noqa: F401
        except Exception:  # noqa: BLE001 - only an optimisation: the test that needs it imports it itself
            pass
