"""The submission's second sandbox (``sandbox.apart()``): a process that never ran the first one's work (issue 25).

A checkpoint is saved in the first sandbox and resumed in the second, which serves every resume of
the exercise instead of a new process for each. These tests hold what makes that as sound as a new
process: the second replays the cells but never sees what the first ran, the first is kept as it
was, a crash costs only the sandbox it happened in, and the two never hold more memory together
than one sandbox may.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.errors import StudentCrash, StudentProblem, SuiteError
from autograder.judge.proxy import Context, SandboxFixture, StudentProxy
from autograder.load import load
from autograder.options import Budget
from autograder.sandbox import cgroups
from autograder.sandbox.client import SandboxConfig
from autograder.sandbox.isolation import Limits
from autograder.session import Session

HAVE = cgroups.open_cgroups(tag=0)
HAVE.close()
needs_cgroups = pytest.mark.skipif(not HAVE.available, reason=f"no cgroup can be made here: {HAVE.reason}")

CELLS = (
    "import os, uuid\n"
    "TOKEN = uuid.uuid4().hex  # drawn at each replay: tells one process from another\n"
    "SEEN = []\n"
    "HELD = None\n"
    "def token():\n    return TOKEN\n"
    "def note(x):\n    SEEN.append(x)\n    return list(SEEN)\n"
    "def hold(mib):\n    global HELD\n    HELD = b'x' * (mib << 20)\n    return len(HELD)\n"
    "class Box:\n    pass\n"
    "def box():\n    return Box()\n"
    "def die():\n    os._exit(3)\n"
)


class _Grading:
    """A session and the fixtures' context, as one test of a suite sees them."""

    def __init__(self, server, tmp_path: Path, limits: Limits | None = None) -> None:
        p = tmp_path / "sub.py"
        p.write_text(CELLS)
        config = SandboxConfig(limits=limits) if limits is not None else SandboxConfig()
        self.session = Session(server, load(p), config, Budget(cell_seconds=30))
        self.ctx = Context()
        self.ctx.session = self.session
        self.ctx.timeout = 120.0  # not about time: sandbox start-ups fall inside this clock on a loaded machine
        self.ctx.restart_clock()
        self.student = StudentProxy(self.ctx)
        self.sandbox = SandboxFixture(self.ctx)

    def close(self) -> None:
        self.ctx.stop_clock()
        self.session.close()


@pytest.fixture
def grading(server, tmp_path):
    g = _Grading(server, tmp_path)
    yield g
    g.close()


def test_the_second_sandbox_replays_the_cells_never_sees_the_firsts_work_and_serves_every_later_call(grading):
    student, sandbox, session = grading.student, grading.sandbox, grading.session
    first = student.token()
    assert student.note("save 1") == ["save 1"]
    with sandbox.apart():
        second = student.token()
        assert second != first, "apart() ran in the first sandbox's process"
        assert student.note("resume 1") == ["resume 1"], "the second sandbox saw what the first one ran"
    assert student.token() == first, "the first sandbox was not kept as it was"
    assert student.note("save 2") == ["save 1", "save 2"]
    with sandbox.apart():
        assert student.token() == second, "the second sandbox was not reused"
        assert student.note("resume 2") == ["resume 1", "resume 2"]
    session.drop_apart()  # the exercise's tests are done
    with sandbox.apart():
        assert student.token() not in (first, second), "a dropped second sandbox was used again"
    assert student.token() == first


def test_a_handle_made_in_one_sandbox_is_refused_in_the_other_and_still_works_in_its_own(grading):
    student, sandbox = grading.student, grading.sandbox
    in_first = student.box()
    with sandbox.apart():
        in_second = student.box()
        with pytest.raises(StudentCrash, match="was lost"):  # checked before anything is sent
            in_first.missing  # noqa: B018
    with pytest.raises(StudentCrash, match="was lost"):
        in_second.missing  # noqa: B018
    with pytest.raises(StudentProblem) as raised:  # reaches the first sandbox's object: the student's AttributeError
        in_first.missing  # noqa: B018
    assert "was lost" not in str(raised.value)


@pytest.mark.parametrize("first_ran", [False, True])
def test_a_nested_apart_is_the_suites_mistake_named_for_the_staff(grading, first_ran):
    if first_ran:  # the first sandbox is kept aside; otherwise the outer apart() starts the only one
        grading.student.token()
    with grading.sandbox.apart(), pytest.raises(SuiteError, match="nests"), grading.sandbox.apart():
        pass
    grading.student.token()  # and the test goes on in the first sandbox


def test_a_crash_in_the_second_sandbox_costs_only_it(grading):
    student, sandbox = grading.student, grading.sandbox
    first = student.token()
    with sandbox.apart():
        second = student.token()
        with pytest.raises(StudentCrash):
            student.die()
    assert student.token() == first, "the first sandbox paid for the second one's crash"
    with sandbox.apart():
        third = student.token()
    assert third not in (first, second)


def _limit_of(sb) -> int:
    """The memory limit the kernel holds for a sandbox's cgroup (read beside its OOM file)."""
    oom = sb._oom_file
    name = "memory.max" if oom.endswith("memory.events") else "memory.limit_in_bytes"
    return int(Path(os.path.dirname(oom), name).read_text())


@needs_cgroups
def test_while_both_live_they_hold_no_more_memory_together_than_one_sandbox_may(grading):
    student, sandbox, session = grading.student, grading.sandbox, grading.session
    limit = session.config.limits.memory_bytes
    student.token()
    first = session.sandbox
    assert _limit_of(first) == limit
    with sandbox.apart():
        second = session.sandbox
        assert second is not first
        assert _limit_of(first) + _limit_of(second) <= limit
        assert _limit_of(second) >= limit // 2, "the sandbox that runs got less than half the limit"
        assert first.memory_in_use() <= _limit_of(first) <= limit // 2, "the waiting first was not narrowed"
    # back in the first: it is the one that runs now, and gets what the waiting second does not hold
    assert _limit_of(first) + _limit_of(second) <= limit
    assert _limit_of(first) >= limit // 2
    assert second.memory_in_use() <= _limit_of(second) <= limit // 2, "the waiting second was not narrowed"
    with sandbox.apart():  # and again for the second, reused
        assert session.sandbox is second
        assert _limit_of(first) + _limit_of(second) <= limit and _limit_of(second) >= limit // 2
    session.drop_apart()
    assert _limit_of(first) == limit, "the first sandbox did not get its whole limit back"
    assert not second.alive


@needs_cgroups
def test_a_first_sandbox_holding_most_of_the_limit_is_replaced_as_by_fresh_instead(server, tmp_path):
    g = _Grading(server, tmp_path, Limits(memory_bytes=3 << 30))
    try:
        first = g.student.token()
        assert g.student.hold(1600) == 1600 << 20
        old = g.session.sandbox
        with g.sandbox.apart():
            second = g.student.token()
        assert second != first
        assert not old.alive, "two sandboxes were kept that together could hold more than the limit"
        assert g.student.token() == second, "the replacement did not stay current, as after fresh()"
        assert _limit_of(g.session.sandbox) == 3 << 30
    finally:
        g.close()


def test_the_checkpointing_suite_resumes_in_the_second_sandbox():
    """Its resumes never run where the save ran, and share one process (not a fresh() for each)."""
    suite = (Path(__file__).resolve().parents[2] / "solutions" / "pytorch-fundamentals" / "checkpointing"
             / "test_hidden.py").read_text()
    assert "with sandbox.apart():" in suite and "sandbox.fresh()" not in suite


@needs_cgroups
def test_the_first_sandbox_gets_its_room_back_when_it_runs_again(grading):
    """Narrowed only while it waits: back in it, a later test may use far more than it held then."""
    student, sandbox = grading.student, grading.sandbox
    student.token()
    with sandbox.apart():
        student.token()
    assert student.hold(1024) == 1 << 30
    with sandbox.apart():  # the second still starts its turn with at least half the limit
        assert student.hold(1024) == 1 << 30
