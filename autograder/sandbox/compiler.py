"""What the sandboxes' compiler leaves out: dynamo's guard-latency profiling, a metric no check reads.

After each compile, torch 2.13's ``CheckFunctionManager`` times the new guards once
(``torch._dynamo.guards.profile_guard_manager``), and first flushes the CPU caches by
allocating and zeroing a fresh 32 MiB buffer. That is 8,192 page faults and 32 MiB of
zeroing per compile, about half of a small compile's time in a forked sandbox, where
every fault is charged to the sandbox's memory cgroup (figures in docs/performance.md).
The latency only feeds dynamo's compile metrics and a debug log line; what a compile
produces, its guards and its recompilations are the same without it.

Applied by the sandbox server after it imports torch._dynamo, before any sandbox is
forked, so student code never runs beside the original; the benchmark floor applies
it too, so that it still runs the same checks. A torch without the function (another
release) is left as it is.
"""

from __future__ import annotations

import sys
from typing import Any


def _unprofiled(root: Any, scope: Any, n_iters: int) -> float:  # noqa: ARG001 - profile_guard_manager's signature
    """No cache flush, no timing: a latency of zero for the metric."""
    return 0.0


def skip_guard_profiling() -> bool:
    """Replace the guard-latency profiler if torch._dynamo is imported; True when it was replaced."""
    guards = sys.modules.get("torch._dynamo.guards")
    if guards is None or not callable(getattr(guards, "profile_guard_manager", None)):
        return False
    guards.profile_guard_manager = _unprofiled  # type: ignore[attr-defined]  # looked up at each call
    return True
