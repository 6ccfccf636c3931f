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

from autograder.assignment import Assignment, AssignmentError, SuiteProblems
from autograder.options import GradeOptions
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.sandbox.client import SandboxServer

# pytest, torch and the judge are imported by the functions that grade, never at import time:
# the CLI process takes GradeOptions from here and must stay free of torch (see autograder.options).
__all__ = ["GradeOptions", "default_jobs", "grade", "suite_files"]


def suite_files(assignment: Assignment, options: GradeOptions) -> list[Path]:
    chosen = assignment.exercises
    if options.exercises:
        chosen = [assignment.exercise(e) for e in options.exercises]
    if not options.public:
        for ex in chosen:
            if not ex.hidden_tests.exists():
                raise AssignmentError(f"{ex.hidden_tests}: missing (every exercise needs its hidden suite)")
    from autograder.judge import collect

    return collect.suite_files(assignment, chosen, public=options.public)


def grade(
    assignment: Assignment,
    paths: Iterable[Path],
    *,
    options: GradeOptions | None = None,
    on_result: Callable[[SubmissionResult], None] | None = None,
    server: SandboxServer | None = None,
) -> list[SubmissionResult]:
    """Grade each path in turn; ``on_result`` sees each result as soon as it is known.

    ``paths`` may be a list or a lazy iterable (a generator fed from a queue, as
    batch workers do): an iterable that is not a list or tuple is consumed one
    path at a time, and only ``options.protected`` guards folders from sandboxes.
    """
    from autograder.sandbox.client import SandboxConfig, SandboxServer

    options = options or GradeOptions()
    streamed = not isinstance(paths, list | tuple)
    paths = (Path(p) for p in paths) if streamed else [Path(p) for p in paths]
    results: list[SubmissionResult] = []

    def collect(r: SubmissionResult) -> None:
        results.append(r)
        if on_result is not None:
            on_result(r)

    files = suite_files(assignment, options)
    if not files:
        return results
    protected = [assignment.course / "solutions", *options.protected]
    if not streamed:
        protected += sorted({p.resolve().parent for p in paths})
    config = SandboxConfig(limits=options.limits, protected=[str(p) for p in protected], isolate=options.isolate)
    own_server = server is None
    # Started first: the server imports torch in its own process while this one imports the judge.
    # The warm-up runs after the first sandbox is handed over: later ones (a fresh() sandbox, a restart,
    # the next submission) import torch._dynamo (a compile exercise's probes do) at no cost.
    server = server or SandboxServer(warm_compiler=needs_compiler(assignment, options))
    try:
        import pytest

        from autograder.judge.collect import invoke_pytest
        from autograder.judge.plugin import GradingPlugin

        plugin = GradingPlugin(
            assignment, paths, server, config, options.budget, collect, require_points=not options.public
        )
        with one_judge_thread():
            code, output = invoke_pytest(files, assignment.course, [plugin, "autograder.judge.plugin"],
                                         keyword=options.keyword)
        if plugin.problems:
            raise SuiteProblems("the assignment's suites have problems:\n" + "\n".join(plugin.problems))
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and (
                streamed or (isinstance(paths, list) and len(results) < len(paths))):
            raise AssignmentError(f"pytest could not run the suites (exit {code}):\n{output[-3000:]}")
    finally:
        if own_server:
            server.close()
    return results


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


COMPILER_MARKS = ("torch.compile", "torch._dynamo", "torch.export")


def needs_compiler(assignment: Assignment, options: GradeOptions) -> bool:
    """Whether a selected exercise compiles: its suite or probes mention ``torch.compile``.

    Only an optimisation hint for the sandbox server (warm dynamo up once, so
    every sandbox's first compile is cheap); when it is wrong, a sandbox
    compiles cold and grading is slower, never different.
    """
    chosen = [assignment.exercise(e) for e in options.exercises] if options.exercises else assignment.exercises
    for ex in chosen:
        for f in (ex.public_tests if options.public else ex.hidden_tests, ex.probes):
            try:
                text = f.read_text() if f is not None and f.is_file() else ""
            except OSError:
                continue
            if any(m in text for m in COMPILER_MARKS):
                return True
    return False


def default_jobs(cap: int | None = None) -> int:
    """Parallel grading processes: one per core this process may use (at most ``cap``)."""
    n = max(1, len(os.sched_getaffinity(0)))
    return min(n, cap) if cap else n
