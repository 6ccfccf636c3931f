"""Each test's seed reaches the sandbox with the test's first request (issue 25: one round trip fewer per test)."""

from __future__ import annotations

import os
import signal

import torch

from autograder.judge.proxy import Context, StudentProxy
from autograder.load import load
from autograder.options import Budget
from autograder.sandbox.client import SandboxConfig
from autograder.session import Session

CELL = "import torch, random\n\ndef draw():\n    return torch.rand(3), random.random()\n"


def _expected(seed):
    g = torch.Generator().manual_seed(seed)
    import random

    return torch.rand(3, generator=g), random.Random(seed).random()


def test_the_first_request_of_a_test_draws_from_the_tests_seed_and_later_ones_go_on(server, tmp_path):
    p = tmp_path / "draws.py"
    p.write_text(CELL)
    session = Session(server, load(p), SandboxConfig(), Budget(cell_seconds=20))
    ctx = Context()
    ctx.session = session
    student = StudentProxy(ctx)
    try:
        ctx.timeout = 120.0  # not about time: two sandbox start-ups fall inside this clock (a loaded CI machine)
        ctx.restart_clock()
        for seed in (1234, 99):
            ctx.seed = seed
            ctx.seed_next()
            first = student.draw()
            second = student.draw()
            want_t, want_r = _expected(seed)
            assert torch.equal(first[0], want_t) and first[1] == want_r, "the test's seed did not reach the sandbox"
            assert not torch.equal(second[0], want_t), "a later request of the same test was seeded again"
        # a sandbox that died before the test is restarted (cells replayed), then seeded before the request
        os.kill(session.ensure().pid, signal.SIGKILL)
        session.sandbox.alive = False
        ctx.seed = 7
        ctx.seed_next()
        again = student.draw()
        assert torch.equal(again[0], _expected(7)[0])
    finally:
        ctx.stop_clock()
        session.close()
