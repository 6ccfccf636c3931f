"""seeding.manual_seed is torch.manual_seed: the same draws after it, without the queued tracebacks."""

from __future__ import annotations

import traceback

import torch

from autograder.sandbox import seeding


def test_the_same_draws_as_after_torch_manual_seed():
    for seed in (0, 1, 12345, 2**32 + 7, 2**63 - 1):
        torch.manual_seed(seed)
        expected = (torch.rand(5), torch.randn(3, 3), torch.randint(0, 100, (4,)))
        torch.rand(7)  # move the generator on
        seeding.manual_seed(seed)
        got = (torch.rand(5), torch.randn(3, 3), torch.randint(0, 100, (4,)))
        assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True)), seed
    assert torch.initial_seed() == 2**63 - 1


def test_a_cpu_only_torch_formats_no_stack(monkeypatch):
    """torch.manual_seed queues CUDA's, XPU's and MTIA's seeds with a formatted traceback each; none are run here."""
    calls = []
    real = traceback.format_stack
    monkeypatch.setattr(traceback, "format_stack", lambda *a, **k: calls.append(1) or real(*a, **k))
    torch.manual_seed(3)
    queued = len(calls)
    calls.clear()
    seeding.manual_seed(3)
    assert seeding.cpu_only() == (not torch.backends.cuda.is_built() and not torch.backends.mps.is_built())
    if seeding.cpu_only():
        assert queued >= 1 and calls == []
    else:
        assert len(calls) == queued  # with an accelerator built in: torch.manual_seed itself
