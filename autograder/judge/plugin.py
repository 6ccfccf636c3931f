"""Stage 3 (judge): Hidden suites run in pytest, in this (trusted) process.

pytest collects the suites once; then, for each submission, every test runs
against that submission's sandbox. A test that hangs costs that test: the
sandbox is killed, and the next test gets a fresh one with the cells replayed.
Test code and assertion internals never reach a student: a test's result
carries only the message of the failed check (plain asserts, no rewriting).
"""

from __future__ import annotations

import contextlib
import inspect
import random
import sys
import time
import traceback
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from _pytest.runner import runtestprotocol

from autograder import errors, gcpause
from autograder.assignment import Assignment, Exercise
from autograder.caps import cap_result
from autograder.defaults import default_of
from autograder.errors import GraderError, JudgeOvertime, LoadError, SandboxError, ServerFailed, StudentProblem
from autograder.judge import collect, feedback
from autograder.judge.collect import EXERCISE, TRACEBACK, test_name
from autograder.judge.feedback import strip_ansi
from autograder.judge.proxy import CLOCK_RUNNING, Context, SandboxFixture, StudentProxy, strip_source
from autograder.judge.spread import OUTPUT_WAIT, Copy, halves, merge_cells, merge_output
from autograder.judge.tamper import scan
from autograder.load import Submission, load
from autograder.options import Budget
from autograder.results import ExerciseResult, Flag, SubmissionResult, TestResult, TestStatus
from autograder.sandbox import seeding
from autograder.sandbox.client import SandboxConfig, SandboxServer
from autograder.session import Session

CONTEXT = Context()


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True)
def _judge_clock(request: pytest.FixtureRequest) -> Any:
    """Per-test seed (judge and sandbox alike) and per-test deadline."""
    item = request.node
    seed = zlib.crc32(item.nodeid.split("::", 1)[-1].encode())
    seeding.manual_seed(seed)  # torch.manual_seed, less its cost on a torch without accelerators
    np.random.seed(seed)
    random.seed(seed)
    marker = item.get_closest_marker("timeout")
    ex = item.stash.get(EXERCISE, None)
    CONTEXT.timeout = float(marker.args[0]) if marker else (ex.timeout if ex else default_of(Exercise, "timeout"))
    CONTEXT.exercise = ex.id if ex else ""
    CONTEXT.probes_path = ex.probes if ex else None
    CONTEXT.seed = seed
    CLOCK_RUNNING[0] = True
    CONTEXT.restart_clock()
    try:
        yield
    finally:
        CLOCK_RUNNING[0] = False
        CONTEXT.stop_clock()


def _ready_sandbox() -> None:
    session = CONTEXT.session
    if session is None:
        raise RuntimeError("no submission is being graded")
    try:
        session.ensure()
    except SandboxError as e:
        raise StudentProblem(
            f"Your notebook could not be run for this test ({e}): see the notes on your cells."
        ) from None
    # Sandbox start-up and cell replays do not count against the test's own limit.
    CONTEXT.restart_clock()
    CONTEXT.seed_next()


@pytest.fixture
def student() -> StudentProxy:
    """The student's namespace in the sandbox."""
    _ready_sandbox()
    return StudentProxy(CONTEXT)


@pytest.fixture
def sandbox() -> SandboxFixture:
    """Probes and other low-level access to the sandbox."""
    _ready_sandbox()
    return SandboxFixture(CONTEXT)


def _exception_line(excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
    return f"{type(excinfo.value).__name__}: {str(excinfo.value)[:500]}"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Generated inputs from here on depend on the suites' seeds alone (see ``ignore_local_constants``)."""
    if "hypothesis" in sys.modules:
        from autograder.judge.generated import ignore_local_constants

        ignore_local_constants()


# ---------------------------------------------------------------------- what a failed test tells the student
GRADER_FAILED = (
    "The grader itself failed on this test; this is not a mistake in your code. The test is left out of your "
    "score (its points are withheld from the maximum) and the staff have been told."
)


def as_grader_error(exc: BaseException | None) -> BaseException | None:
    """A judge-side bug in the test code itself is the grader's: a value the student returned cannot
    cause a NameError, an ImportError or a SyntaxError in the judge."""
    if isinstance(exc, NameError | ImportError | SyntaxError) and not isinstance(exc, GraderError):
        return GraderError(f"{type(exc).__name__} in the test code: {exc}")
    return exc


def release_frames(exc: BaseException | None) -> None:
    """Clear the locals of every finished frame that an exception of a test's phase, or one it chains, holds.

    A traceback keeps its frames' locals alive, and pytest's frames on it make a cycle that only a
    collection of the oldest generation may free. Whatever was too large for the judge's memory (a
    partial reply, a check's huge intermediate) would outlive its test, and the next tests would fail
    for memory that a student's code no longer uses. Called once the test's outcome is written down.

    Not traceback.clear_frames: clearing a suspended generator's frame closes the generator (a fixture
    still in use, say), so a generator's or coroutine's frame is left as it is, and so is a running one.
    """
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        tb = e.__traceback__
        while tb is not None:
            if not tb.tb_frame.f_code.co_flags & _SUSPENDABLE:
                with contextlib.suppress(RuntimeError):  # a frame still running
                    tb.tb_frame.clear()
            tb = tb.tb_next
        todo += [e.__cause__, e.__context__]


_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def outcome(exc: BaseException | None, name: str, exercise: str) -> tuple[TestStatus, str, str]:
    """(status, the message a student reads, misconception key) of a test that raised ``exc``.

    The status is ``errors.TABLE``'s for the exception's class (one table for the judge and the CLI);
    the words depend on who wrote them. One place for it: grading and staff running a suite under
    plain pytest (:mod:`autograder.authoring.pytest_plugin`) show the same words.
    """
    exc = as_grader_error(exc)
    found = errors.meaning(exc) if exc is not None else errors.TABLE[BaseException]
    if found.status in ("grader_error", "stop"):  # "stop": grade_one re-raises it; under plain pytest it reads so
        return "grader_error", GRADER_FAILED, ""
    status = cast(TestStatus, found.status)  # neither "grader_error" nor "stop" here: a student's status
    if isinstance(exc, errors.StudentFacingError):  # written for the student (a check's message, a problem's)
        return status, strip_ansi(exc.message), getattr(exc, "misconception", "")
    if isinstance(exc, AssertionError):
        return status, strip_ansi(str(exc)) or f"Your code did not pass this check: {name}.", ""
    if isinstance(exc, MemoryError):
        return status, (
            "The grader ran out of its own memory while checking what your code returned "
            f"for `{exercise}`: the value is far larger than this exercise needs. Return only what the "
            "statement asks for."
        ), ""
    return status, strip_ansi(
        f"The grader could not use what your code returned ({type(exc).__name__}: "
        f"{str(exc)[:300]}). Compare the types and shapes you return with the exercise statement."
    ), ""


def with_sentence(message: str, key: str, suite: Any) -> str:
    """``message`` ending with the sentence the suite's ``MISCONCEPTIONS`` registers for ``key``.

    The registry is the one place a misconception's sentence is written; a failure keyed with it
    always carries that sentence, whether the test wrote it out or gave the facts only.
    """
    registry = getattr(suite, "MISCONCEPTIONS", None)
    sentence = registry.get(key) if key and isinstance(registry, dict) else None
    if not isinstance(sentence, str) or sentence in message:
        return message
    return f"{message.rstrip()} {sentence}".strip()


# ---------------------------------------------------------------------- the plugin
class GradingPlugin:
    """Collects the suites once and runs them against each submission in turn."""

    def __init__(
        self,
        assignment: Assignment,
        submissions: Iterable[Path],
        server: SandboxServer,
        config: SandboxConfig,
        budget: Budget,
        on_result: Callable[[SubmissionResult], None],
        require_points: bool = True,
        spread: Callable[[Path], int] | None = None,
    ) -> None:
        self.assignment = assignment
        self.spread = spread  # judges a submission may be graded by at once (judge/spread.py); None: one
        self.submissions = submissions
        self.server = server
        self.config = config
        self.budget = budget
        self.on_result = on_result
        self.require_points = require_points
        self.items: list[pytest.Item] = []
        self.problems: list[str] = []
        self._probes: dict[str, str] | None = None
        self._excinfo: dict[str, BaseException] = {}
        self._raised: list[BaseException] = []  # every phase's exception (setup, call, teardown): released after
        self.server_failed: ServerFailed | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        collect.register_markers(config)

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        for item in items:
            problem = collect.classify(item, self.assignment)
            if problem is None and self.require_points and item.stash[collect.POINTS] is None:
                problem = f"{item.name} has no @pytest.mark.points(n)"
            if problem is not None:
                self.problems.append(f"{item.path}:{collect.test_line(item)}: {problem}")
            # pytest's own failure report (source lines found by parsing the suite's AST, per frame) is
            # never shown to anyone: a result carries the check's message, staff get the traceback from
            # pytest_runtest_makereport. Building it cost more than the checks of a failing submission.
            item.repr_failure = _exception_line  # type: ignore[method-assign]
            item._repr_failure_py = _exception_line  # type: ignore[method-assign,assignment]
        self.items = items

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.problems.append(f"{report.nodeid}: could not be collected:\n{report.longreprtext}")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        report = yield
        if call.excinfo is not None:
            self._raised.append(call.excinfo.value)
        if call.excinfo is not None and item.nodeid not in self._excinfo:
            self._excinfo[item.nodeid] = call.excinfo.value
            item.stash[TRACEBACK] = "".join(traceback.format_exception(call.excinfo.value))[-3000:]
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        if self.problems:
            raise pytest.UsageError("the assignment's suites have problems:\n" + "\n".join(self.problems))
        gcpause.resume()  # a worker or `check` imported with the collector paused: grading's garbage is collected
        for n, path in enumerate(self.submissions):
            # A second submission: it and every later one start warm; a lone one never pays for it. (A server
            # whose owner asked for the warm-up between requests has started it already: this asks nothing.)
            if n == 1:
                self.server.warm_later()
            try:
                result = self.grade_one(Path(path))
            except ServerFailed as e:  # nothing can be graded: grade() raises it once pytest is done
                self.server_failed = e
                return True
            self.on_result(result)
        return True

    # ------------------------------------------------------------------ one submission
    def probe_sources(self) -> dict[str, str]:
        """Stripped probe source of every exercise with collected tests (loaded before student code)."""
        if self._probes is None:
            self._probes = {}
            seen = {item.stash[EXERCISE].id: item.stash[EXERCISE] for item in self.items}
            for ex_id, ex in seen.items():
                if ex.probes is not None and ex.probes.is_file():
                    try:
                        self._probes[ex_id] = strip_source(ex.probes.read_text())
                    except SyntaxError:
                        self._probes[ex_id] = ex.probes.read_text()  # the load reports it as a grader error
        return self._probes

    def grade_one(self, path: Path) -> SubmissionResult:
        started = time.monotonic()
        result = SubmissionResult(submission=path.stem, path=str(path), assignment=self.assignment.id)
        try:
            sub: Submission = load(path)
        except LoadError as e:
            result.status, result.error = "load_error", str(e)
            result.exercises = self._empty_exercises(f"Not graded: {e}")
            result.seconds = time.monotonic() - started
            return cap_result(result)
        result.sha256 = sub.sha256
        result.flags = scan(sub)  # tamper evidence, in the judge; points stay as measured
        probes = self.probe_sources()
        # All of the above while the server may still be importing torch (the first submission of a cold start).
        mine: list[pytest.Item] = list(self.items)
        theirs: list[pytest.Item] = []
        copy = None
        if self.spread is not None and self.spread(path) > 1:
            mine, theirs = halves(self.items, weight=lambda i: i.stash[EXERCISE].timeout,
                                  exercise=lambda i: i.stash[EXERCISE].id)
            copy = self._fork_copy(sub, probes, theirs) if mine else None
            if copy is None:
                mine, theirs = list(self.items), []
        try:
            self.server.wait_ready()
            # with a copy, the judge waits for the copy's results anyway: its own output is read to the end too
            tests, session = self._grade_items(self.server, sub, probes, mine,
                                               wait_output=OUTPUT_WAIT if copy is not None else 0.0)
        except BaseException:
            if copy is not None:
                copy.kill()
            raise
        cells, output = sorted(session.cells.values(), key=lambda c: c.index), session.output
        if copy is not None:
            got = copy.results()
            if got is not None:
                half = SubmissionResult.from_dict(got)
                more = [t for e in half.exercises for t in e.tests]
                their_cells, their_output = half.cells, half.output
            else:  # the copy failed: its half is graded here, as it would have been without it
                more, other = self._grade_items(self.server, sub, probes, theirs, wait_output=OUTPUT_WAIT)
                their_cells, their_output = list(other.cells.values()), other.output
            tests += more
            cells, output = merge_cells(cells, their_cells), merge_output(output, their_output)
        result.cells = cells
        result.protections = session.protections
        result.output = output
        result.exercises = self._group(tests)
        result.flags += [Flag(cell=0, line=0, where=f"test `{t.name}` of exercise `{t.exercise}`", reason=t.review)
                         for t in tests if t.review]
        result.seconds = time.monotonic() - started
        return cap_result(result)

    def _grade_items(self, server: SandboxServer, sub: Submission, probes: dict[str, str],
                     items: list[pytest.Item], wait_output: float = 0.0) -> tuple[list[TestResult], Session]:
        """Run ``items`` against one session of ``sub`` (its sandboxes forked by ``server``), in order.

        ``wait_output``: see :meth:`Session.close` (both halves of a spread submission wait; a lone judge
        does not)."""
        wanted = {item.stash[EXERCISE].id for item in items}
        session = Session(server, sub, self.config, self.budget,
                          probes={k: v for k, v in probes.items() if k in wanted})
        CONTEXT.session = session
        CONTEXT.pending_seed = None
        tests: list[TestResult] = []
        last = {item.stash[EXERCISE].id: n for n, item in enumerate(items)}
        try:
            for n, item in enumerate(items):
                tests.append(self._run_item(item))
                if session.cannot_start is not None:  # never a grade: the whole run stops (grade() raises it)
                    raise session.cannot_start
                ex_id = item.stash[EXERCISE].id
                if last[ex_id] == n:  # its tests are done: a later sandbox (fresh(), a restart) need not load them
                    session.probes.pop(ex_id, None)
                    session.drop_apart()  # a second sandbox serves one exercise's tests, never the next one's
        finally:
            CONTEXT.session = None
            session.close(wait_output)
        return tests, session

    def _fork_copy(self, sub: Submission, probes: dict[str, str], items: list[pytest.Item]) -> Copy | None:
        """A copy of this judge grading ``items`` with a server connection of its own (judge/spread.py);
        None where the server cannot take another judge (this judge then grades every test itself)."""
        try:
            sock = self.server.attach_helper()
        except ServerFailed:
            return None

        def grade_half() -> dict[str, Any]:
            server = SandboxServer.attached(sock.detach())
            try:
                tests, session = self._grade_items(server, sub, probes, items, wait_output=OUTPUT_WAIT)
            finally:
                server.close()
            return SubmissionResult(submission=sub.path.stem, path=str(sub.path), assignment=self.assignment.id,
                                    exercises=self._group(tests), cells=list(session.cells.values()),
                                    output=session.output).to_dict()

        try:
            return Copy(grade_half)
        finally:
            sock.close()  # the copy holds it now

    def _run_item(self, item: pytest.Item) -> TestResult:
        ex = item.stash[EXERCISE]
        tr = TestResult(nodeid=item.nodeid, name=test_name(item), exercise=ex.id, max_points=collect.points(item))
        self._excinfo.pop(item.nodeid, None)
        item.stash[TRACEBACK] = ""
        feedback.REVIEW.clear()
        if hasattr(item, "_initrequest"):
            item._initrequest()
        t0 = time.monotonic()
        reports = runtestprotocol(item, nextitem=None, log=False)
        tr.seconds = time.monotonic() - t0
        exc = self._excinfo.pop(item.nodeid, None)
        if exc is not None and errors.meaning(exc).status == "stop":  # no grade at all: the run stops (grade() raises)
            raise exc
        if all(r.passed for r in reports):
            tr.status, tr.points = "passed", tr.max_points
        elif any(r.skipped for r in reports) and not any(r.failed for r in reports):
            tr.status, tr.max_points = "skipped", 0.0
            tr.message = "Not applicable here: " + str(getattr(exc, "msg", "") or "skipped")
        else:
            exc = as_grader_error(exc)
            tr.status, tr.message, tr.misconception = outcome(exc, tr.name, ex.id)
            tr.message = with_sentence(tr.message, tr.misconception, getattr(item, "module", None))
            tr.cause = getattr(exc, "cause", "") if isinstance(exc, StudentProblem) else ""
            if isinstance(exc, JudgeOvertime) and CONTEXT.session is not None and CONTEXT.session.sandbox:
                CONTEXT.session.sandbox.kill()  # interrupted mid-request, perhaps: the next test starts afresh
            if CONTEXT.overran and tr.status in ("failed", "error"):  # its own time ran out first
                tr.status, tr.misconception = "timeout", ""
                tr.message = (f"This test ran past its time limit ({CONTEXT.timeout:g} s), counting the grader's "
                              "own checks of what your code returned; it is reported as a timeout. "
                              + tr.message)
            if tr.status == "grader_error":
                tr.withheld, tr.max_points, tr.points = tr.max_points, 0.0, 0.0
                tr.detail = f"grader error: {getattr(exc, 'detail', exc)}\n"
        tr.message = strip_ansi(tr.message)  # torch colours some of its messages
        tr.cause = strip_ansi(tr.cause)
        if tr.status != "passed":
            tr.detail += item.stash.get(TRACEBACK, "")
        tr.review = "; ".join(feedback.REVIEW)
        feedback.REVIEW.clear()
        raised, self._raised = self._raised, []
        for e in raised:  # the first one, the test's outcome, and any later phase's (a fixture's teardown)
            release_frames(e)
        return tr

    def _group(self, tests: list[TestResult]) -> list[ExerciseResult]:
        out = []
        for ex in self.assignment.exercises:
            mine = [t for t in tests if t.exercise == ex.id]
            out.append(
                ExerciseResult(
                    id=ex.id,
                    title=ex.title,
                    max_points=sum(t.max_points for t in mine) if mine else ex.points,
                    tests=mine,
                )
            )
        return out

    def _empty_exercises(self, message: str) -> list[ExerciseResult]:
        """Every test at 0 with the same message (a submission that could not be run at all)."""
        tests = [
            TestResult(
                nodeid=i.nodeid,
                name=test_name(i),
                exercise=i.stash[EXERCISE].id,
                max_points=collect.points(i),
                status="error",
                message=message,
            )
            for i in self.items
        ]
        return self._group(tests)
