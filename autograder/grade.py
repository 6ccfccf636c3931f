"""Grade submissions: load, run in the sandbox, judge. Storing and reporting are the caller's.

One warm sandbox server and one pytest collection serve every submission of a
call, so the per-submission cost is the student's own code plus the checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.assignment import Assignment, AssignmentError
from autograder.judge import collect
from autograder.judge.collect import run_pytest
from autograder.judge.plugin import GradingPlugin
from autograder.results import SubmissionResult
from autograder.sandbox.client import SandboxConfig, SandboxServer
from autograder.sandbox.isolation import Limits
from autograder.session import Budget


@dataclass
class GradeOptions:
    public: bool = False  # run the public tests (students' `check`) instead of the hidden ones
    exercises: list[str] | None = None  # restrict to these exercise ids
    isolate: bool = True
    limits: Limits = field(default_factory=Limits)
    budget: Budget = field(default_factory=Budget)
    protected: list[Path] = field(default_factory=list)  # extra paths the sandbox must never see


def suite_files(assignment: Assignment, options: GradeOptions) -> list[Path]:
    chosen = assignment.exercises
    if options.exercises:
        chosen = [assignment.exercise(e) for e in options.exercises]
    if not options.public:
        for ex in chosen:
            if not ex.hidden_tests.exists():
                raise AssignmentError(f"{ex.hidden_tests}: missing (every exercise needs its hidden suite)")
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
    options = options or GradeOptions()
    streamed = not isinstance(paths, list | tuple)
    paths = (Path(p) for p in paths) if streamed else [Path(p) for p in paths]
    results: list[SubmissionResult] = []

    def collect(r: SubmissionResult) -> None:
        results.append(r)
        if on_result is not None:
            on_result(r)

    protected = [assignment.course / "solutions", *options.protected]
    if not streamed:
        protected += sorted({p.resolve().parent for p in paths})
    config = SandboxConfig(limits=options.limits, protected=[str(p) for p in protected], isolate=options.isolate)
    own_server = server is None
    server = server or SandboxServer()
    plugin = GradingPlugin(
        assignment, paths, server, config, options.budget, collect, require_points=not options.public
    )
    files = suite_files(assignment, options)
    if not files:
        return results
    try:
        code, output = run_pytest(files, assignment.course, [plugin, "autograder.judge.plugin"])
        if plugin.problems:
            raise AssignmentError("the assignment's suites have problems:\n" + "\n".join(plugin.problems))
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and (streamed or len(results) < len(paths)):
            raise AssignmentError(f"pytest could not run the suites (exit {code}):\n{output[-3000:]}")
    finally:
        if own_server:
            server.close()
    return results


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))
