"""Grade submissions: load, run in the sandbox, judge. Storing and reporting are the caller's.

One warm sandbox server and one pytest collection serve every submission of a
call, so the per-submission cost is the student's own code plus the checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from autograder.assignment import Assignment, AssignmentError, SuiteProblems, load_assignment
from autograder.judge import collect
from autograder.judge.collect import run_pytest
from autograder.judge.plugin import GradingPlugin
from autograder.results import SubmissionResult
from autograder.sandbox.client import SandboxConfig, SandboxServer
from autograder.sandbox.isolation import Limits
from autograder.session import Budget


@dataclass
class GradeOptions:
    """The grading settings, once: the CLI fills them in, batch workers receive them as JSON (``to_dict``)."""

    public: bool = False  # run the public tests (students' `check`) instead of the hidden ones
    exercises: list[str] | None = None  # restrict to these exercise ids
    isolate: bool = True
    limits: Limits = field(default_factory=Limits)
    budget: Budget = field(default_factory=Budget)
    protected: list[Path] = field(default_factory=list)  # extra paths the sandbox must never see
    keyword: str | None = None  # pytest's -k: only the tests it selects (staff trying one test)

    def to_dict(self) -> dict[str, Any]:
        return {"public": self.public, "exercises": self.exercises, "isolate": self.isolate,
                "limits": asdict(self.limits), "budget": asdict(self.budget),
                "protected": [str(p) for p in self.protected], "keyword": self.keyword}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GradeOptions:
        return cls(public=bool(d.get("public", False)), exercises=d.get("exercises"),
                   isolate=bool(d.get("isolate", True)), limits=Limits(**d.get("limits", {})),
                   budget=Budget(**d.get("budget", {})), protected=[Path(p) for p in d.get("protected", [])],
                   keyword=d.get("keyword"))


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
        code, output = run_pytest(files, assignment.course, [plugin, "autograder.judge.plugin"],
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


def default_jobs(cap: int | None = None) -> int:
    """Parallel grading processes: one per core this process may use (at most ``cap``)."""
    n = max(1, len(os.sched_getaffinity(0)))
    return min(n, cap) if cap else n


# ---------------------------------------------------------------------- grading in parallel (validate)
_WORKER_SERVER: SandboxServer | None = None


def _worker_init() -> None:
    global _WORKER_SERVER
    import torch

    torch.set_num_threads(1)
    _WORKER_SERVER = SandboxServer()


def _worker_grade(assignment_id: str, course: str, paths: list[str], exercises: list[str] | None,
                  public: bool) -> list[dict]:
    a = load_assignment(assignment_id, Path(course))
    rs = grade(a, [Path(p) for p in paths], server=_WORKER_SERVER,
               options=GradeOptions(exercises=exercises, public=public))
    return [r.to_dict() for r in rs]


@dataclass
class Task:
    """Submissions graded together against the same suites."""

    paths: list[Path]
    exercises: list[str] | None  # None: every exercise's suite
    public: bool = False


def grade_all(assignment: Assignment, tasks: list[Task], *, server: SandboxServer | None = None, jobs: int = 1,
              on_result: Callable[[SubmissionResult], None] | None = None) -> list[SubmissionResult]:
    """Grade every task; with ``jobs > 1``, in that many worker processes (each with its own sandbox server)."""
    tasks = [t for t in tasks if t.paths]
    out: list[SubmissionResult] = []
    if jobs <= 1 or sum(len(t.paths) for t in tasks) <= 2:
        for t in tasks:
            out += grade(assignment, t.paths, options=GradeOptions(exercises=t.exercises, public=t.public),
                         server=server, on_result=on_result)
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    chunks: list[Task] = []
    for t in tasks:  # small chunks keep every worker busy until the end
        size = max(1, min(4, len(t.paths) // jobs or 1))
        chunks += [Task(t.paths[i:i + size], t.exercises, t.public) for i in range(0, len(t.paths), size)]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init) as pool:
        futures = [pool.submit(_worker_grade, assignment.id, str(assignment.course), [str(p) for p in c.paths],
                               c.exercises, c.public) for c in chunks]
        for fut in as_completed(futures):
            for d in fut.result():
                r = SubmissionResult.from_dict(d)
                out.append(r)
                if on_result:
                    on_result(r)
    return out

