"""Grade submissions: load, run in the sandbox, judge. Storing and reporting are the caller's.

One warm sandbox server and one pytest collection serve every submission of a
call, so the per-submission cost is the student's own code plus the checks.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.assignment import Assignment, CourseDir
from autograder.errors import AssignmentError, SuiteProblems
from autograder.options import GradeOptions
from autograder.results import SubmissionResult
from autograder.warmup import import_judge_dynamo, start_server

if TYPE_CHECKING:
    from autograder.sandbox.client import SandboxServer

# pytest, torch and the judge are imported by the functions that grade, never at import time: the CLI
# process must stay free of torch (see autograder.options). GradeOptions stays importable from here for
# callers outside the project; the project's own code takes it from autograder.options.
__all__ = ["GradeOptions", "default_jobs", "grade", "suite_files"]


def suite_files(assignment: Assignment, options: GradeOptions) -> list[Path]:
    """The selected exercises' suite files (public or hidden); raises when one lacks its hidden suite.

    Imports neither torch nor the judge (:func:`grade` starts its sandbox server after this).
    """
    chosen = assignment.exercises
    if options.exercises:
        chosen = [assignment.exercise(e) for e in options.exercises]
    if not options.public:
        for ex in chosen:
            if not ex.hidden_tests.exists():
                raise AssignmentError(f"{ex.hidden_tests}: missing (every exercise needs its hidden suite)")
    return assignment.suite_files(chosen, public=options.public)


def grade(
    assignment: Assignment,
    paths: Iterable[Path],
    *,
    options: GradeOptions | None = None,
    on_result: Callable[[SubmissionResult], None] | None = None,
    server: SandboxServer | None = None,
    stream: bool = False,
    spread: Callable[[Path], int] | None = None,
) -> list[SubmissionResult]:
    """Grade each path in turn; ``on_result`` sees each result as soon as it is known.

    ``stream=True`` (batch workers, whose paths come from a queue one at a
    time) consumes ``paths`` lazily and keeps no result itself: each goes to
    ``on_result`` only, and the call returns an empty list, so a worker's
    memory stays flat over any number of jobs. Otherwise ``paths`` (any
    iterable) is read up front and every result is returned too.

    Either way each submission's folder is protected from every sandbox: a
    list's are all known before the first sandbox starts, a stream's are
    added as each path is taken, so each sandbox is denied its own
    submission's folder and every earlier one (a folder inside one already
    protected adds nothing: the sandboxes' spares stay reusable).

    ``spread(path)``: how many judges may grade that submission at once; 2 shares its exercises with a fork
    of this judge (``judge/spread.py``), where a core would otherwise sit idle (batch workers read it from
    each job). None: one judge for each.
    """
    from autograder.sandbox.client import SandboxConfig

    if stream and on_result is None:
        raise ValueError("grade(stream=True) keeps no result: pass on_result to receive them")
    options = options or GradeOptions()
    results: list[SubmissionResult] = []
    delivered = 0

    def collect(r: SubmissionResult) -> None:
        nonlocal delivered
        delivered += 1
        if not stream:
            results.append(r)
        if on_result is not None:
            on_result(r)

    files = suite_files(assignment, options)
    if not files:
        return results
    protected = [CourseDir(assignment.course).hidden(), *options.protected]
    config = SandboxConfig(limits=options.limits, protected=[str(p) for p in protected], isolate=options.isolate)
    listed = None if stream else [Path(p) for p in paths]
    for path in listed or ():
        _protect_folder(config.protected, path)
    submissions = listed if listed is not None else _protecting(paths, config.protected)
    own_server = server is None
    # Started before anything here imports torch: the server imports torch (and torch._dynamo, when the
    # selected exercises need it) in its own process while this one imports the judge.
    server = server or start_server(assignment, options)
    try:
        import pytest

        from autograder.judge.collect import invoke_pytest
        from autograder.judge.plugin import GradingPlugin

        plugin = GradingPlugin(
            assignment, submissions, server, config, options.budget, collect, require_points=not options.public,
            spread=spread,
        )
        import_judge_dynamo(assignment, options)
        with one_judge_thread():
            code, output = invoke_pytest(files, assignment.course, [plugin, "autograder.judge.plugin"],
                                         keyword=options.keyword)
        if plugin.server_failed is not None:
            raise plugin.server_failed
        if plugin.problems:
            raise SuiteProblems("the assignment's suites have problems:\n" + "\n".join(plugin.problems))
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and (
                listed is None or delivered < len(listed)):
            raise AssignmentError(f"pytest could not run the suites (exit {code}):\n{output[-3000:]}")
    finally:
        if own_server:
            server.close()
    return results


def _protect_folder(protected: list[str], submission: Path) -> None:
    """Add the folder holding ``submission`` to ``protected``, unless a protected path already holds it."""
    folder = str(submission.resolve().parent)
    if not any(folder == p or folder.startswith(p.rstrip("/") + "/") for p in map(os.path.realpath, protected)):
        protected.append(folder)


def _protecting(paths: Iterable[Path], protected: list[str]) -> Iterator[Path]:
    """``paths`` one at a time, each one's folder protected before its sandbox starts."""
    for p in paths:
        path = Path(p)
        _protect_folder(protected, path)
        yield path


@contextlib.contextmanager
def one_judge_thread() -> Iterator[None]:
    """The judge's own torch work on one thread, as in batch workers (``OMP_NUM_THREADS=1``).

    The judge's tensors are tiny and it takes turns with the sandbox: more
    threads only spin against the sandbox and the other workers (on a busy
    2-core machine, four times slower per submission). Batch workers, the
    ``check`` command and a notebook's ``check()`` thus compute the same
    expected values the same way. A notebook kernel's own setting is restored after.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def default_jobs(cap: int | None = None) -> int:
    """Parallel grading processes: one per core this process may use (at most ``cap``)."""
    n = max(1, len(os.sched_getaffinity(0)))
    return min(n, cap) if cap else n
