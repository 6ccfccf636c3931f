"""The status reply says when to ask again (issue 45): a class of 300 polling every second kept a core of the
web tier busy during a burst, taken from the graders. Far back in the queue a client is asked to poll less
often; while its job runs, or near the front, once a second; never after it is done."""

from __future__ import annotations

from autograder.service.client import _poll_interval
from autograder.service.store import Submission
from autograder.service.web.site import POLL_MAX_S, View

SUB = Submission("s1", "alice", "demo", "0" * 64, "py", "a.py", 10, 0.0, 0)


def _view(status: str, wait_s: int = 0, waiting_for: str = "") -> View:
    return View(SUB, status, 3 if status == "queued" else 0, None, None, None, "hidden", False, "", wait_s,
                waiting_for)


def test_the_pace_follows_the_wait():
    assert _view("queued", wait_s=600).poll_s == POLL_MAX_S  # far back: a few polls a minute
    assert _view("queued", wait_s=40).poll_s == 2.0
    assert _view("queued", wait_s=5).poll_s == 1.0  # near the front: every second
    assert _view("running").poll_s == 1.0
    assert _view("graded").poll_s == 0.0 and _view("error").poll_s == 0.0
    assert _view("queued", wait_s=5, waiting_for="a grading worker with a GPU").poll_s == POLL_MAX_S
    assert _view("queued", wait_s=600).api("u")["poll_s"] == POLL_MAX_S


def test_submit_wait_follows_the_servers_pace_within_bounds():
    assert _poll_interval({"poll_s": 5.0}) == 5.0
    assert _poll_interval({"poll_s": 3600}) == 10.0  # a hostile or broken server cannot stall the client
    assert _poll_interval({"poll_s": 0.001}) == 0.5  # nor make it hammer the server
    assert _poll_interval({}) == 1.0 and _poll_interval({"poll_s": "soon"}) == 1.0  # an older server: 1 s
