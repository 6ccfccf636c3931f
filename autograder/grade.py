"""Grade submissions: load, run in the sandbox, judge. Storing and reporting are the caller's.

One warm sandbox server and one pytest collection serve every submission of a
call, so the per-submission cost is the student's own code plus the checks.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.assignment import Assignment, AssignmentError
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
    files = []
    for ex in chosen:
        f = ex.public_tests if options.public else ex.hidden_tests
        if f.exists():
            files.append(f)
        elif not options.public:
            raise AssignmentError(f"{f}: missing (every exercise needs its hidden suite)")
    return files


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
        with tempfile.TemporaryDirectory(prefix="torchgrader-pytest-") as tmp:
            ini = Path(tmp) / "pytest.ini"
            ini.write_text("[pytest]\n")
            args = [
                *map(str, files),
                "-c",
                str(ini),
                "--rootdir",
                str(assignment.course),
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                "-p",
                "no:logging",  # per-test log capture costs milliseconds per test, per submission
                "--capture=sys",  # fd-level capture would dup2 three times per test
                "--assert=plain",
                "--import-mode=importlib",
                "-o",
                "python_files=test_*.py public_test.py",
                "-q",
            ]
            sink = io.StringIO()
            _forget_suite_modules()
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                code = pytest.main(args, plugins=[plugin, "autograder.judge.plugin"])
            _forget_suite_modules()
            if plugin.problems:
                raise AssignmentError("the assignment's suites have problems:\n" + "\n".join(plugin.problems))
            if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and (
                    streamed or len(results) < len(paths)):
                raise AssignmentError(f"pytest could not run the suites (exit {int(code)}):\n{sink.getvalue()[-3000:]}")
    finally:
        if own_server:
            server.close()
    return results


def _forget_suite_modules() -> None:
    """Drop imported suite modules so the next collection reads the files again.

    pytest's importlib mode names a suite module after its path under the
    course (``solutions.demo.basics.test_hidden``); a cached one from another
    course or an earlier version of the file would otherwise be reused.
    """
    for name in list(sys.modules):
        head = name.split(".", 1)[0]
        if head in ("solutions", "assignments") or name.rsplit(".", 1)[-1] in ("test_hidden", "public_test"):
            del sys.modules[name]


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))
