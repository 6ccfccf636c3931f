"""A student's submission on an idle service borrows the waiting slot's share (judge/spread.py, issue 25).

A real grading pool with real warm workers: with two slots and one submission, the submission is graded
by the judge and a copy of it, each exercise's functions printing the token of the sandbox they ran in
(two tokens); the lending slot is given back afterwards. With one slot there is nothing to borrow.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from autograder.service.blobs import Blobs
from autograder.service.config import Policy, ServiceConfig
from autograder.service.grading import GradingPool
from autograder.service.store import ServiceStore
from tests.helpers import DEMO_COURSE
from tests.judge.test_spread import TOKENS


def _graded_once(tmp_path: Path, workers: int) -> tuple[dict, GradingPool]:
    store = ServiceStore(tmp_path / "s.sqlite")
    store.put_person("ann", "Ann Student")
    blobs = Blobs(tmp_path / "blobs")
    pool = GradingPool(ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE, workers=workers),
                       store, blobs, tmp_path / "logs")
    pool.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(s.state == "ready" for s in pool.slots):
            time.sleep(0.1)
        assert all(s.state == "ready" for s in pool.slots), pool.health()
        data = TOKENS.encode()
        sid = store.add_submission("ann", "demo", blobs.put(data), "py", "mine.py", len(data), 0, ["hidden"])
        pool.wake()
        while time.monotonic() < deadline and sid not in store.latest_results("demo"):
            time.sleep(0.1)
        result = store.latest_results("demo")[sid].result
        return result, pool
    finally:
        pool.stop()


@pytest.mark.parametrize(("workers", "sandboxes"), [(2, 2), (1, 1)])
def test_a_submission_borrows_a_waiting_slot_and_gives_it_back(tmp_path: Path, workers: int, sandboxes: int):
    result, pool = _graded_once(tmp_path, workers)
    assert result["total"] == result["max_total"] == 6, result
    tokens = set(re.findall(r"in ([0-9a-f]{32})", result["output"]))
    assert len(tokens) == sandboxes, result["output"]
    assert not any(s.lent for s in pool.slots)


def test_a_lent_slot_claims_nothing_until_it_is_given_back(tmp_path: Path):
    """The service never runs more judges than its slots: a share is lent only while the queue is empty,
    and the lender takes no job until it is given back."""
    from autograder.service.grading import SlotState

    store = ServiceStore(tmp_path / "s.sqlite")
    store.put_person("ann", "Ann Student")
    blobs = Blobs(tmp_path / "blobs")
    pool = GradingPool(ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE, workers=2),
                       store, blobs, tmp_path / "logs")
    a, b = SlotState("demo 0", "demo", state="ready"), SlotState("demo 1", "demo", state="ready")
    pool.slots = [a, b]

    class Local:  # a local process backend: its workers share this machine
        shares_server = True

    def submit(n: int) -> None:
        data = TOKENS.encode() + b"#" * n
        store.add_submission("ann", "demo", blobs.put(data), "py", f"mine{n}.py", len(data), 0, ["hidden"])

    submit(1)
    submit(2)
    assert pool._claim(a) is not None and a.state == "grading"
    assert pool._borrow(a, Local()) is None  # a second student waits: b is about to take them
    assert pool._claim(b) is not None
    b.state = "ready"  # b's grade is done; the queue is empty now
    lender = pool._borrow(a, Local())
    assert lender is b and b.lent
    assert pool._borrow(a, Local()) is None  # one share each: b's is out already
    submit(3)
    assert pool._claim(b) is None and store.queued() == 1  # lent: the new job stays queued
    pool._give_back(lender)
    assert not b.lent and pool._claim(b) is not None and b.state == "grading"
    assert pool._borrow(a, Local()) is None  # a grading slot lends nothing
    b.state = "ready"
    assert pool._borrow(a, object()) is None  # containers and clusters: not this machine's to lend
