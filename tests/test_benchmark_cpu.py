"""benchmarks/speed.py's CPU accounting reads /proc/stat's columns for what they are (timings are never asserted)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.speed import Cpu, kernel_threads

pytestmark = pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="no /proc/stat on this system")


def test_work_done_here_shows_as_busy_time_of_the_machine():
    before, own = Cpu.now(), time.process_time()
    while time.process_time() - own < 0.5:
        pass
    spent = time.process_time() - own
    used = Cpu.now() - before
    # busy counts every process: at least this one's work (minus a tick of rounding), never idle time instead
    assert used.busy >= spent - 0.05, (used, spent)
    assert used.busy + used.idle + used.steal > 0


def test_shares_are_of_all_cores_time():
    assert Cpu(busy=2.0, idle=1.0, steal=1.0).shares() == "idle 25 %, steal 25 %"
    assert Cpu().shares() == "idle ?, steal ?"
    assert Cpu(3.0, 2.0, 1.0) - Cpu(1.0, 1.0, 1.0) == Cpu(2.0, 1.0, 0.0)


def test_the_kernels_own_threads_are_named_and_a_process_of_the_benchmark_is_not_among_them():
    """A VM's memory daemon (kdamond took 5 % of a 2-core VM during a batch) shows by name, apart from the batch."""
    before, own = Cpu.now(), time.process_time()
    while time.process_time() - own < 0.5:
        pass
    used = Cpu.now() - before
    assert sum(v for _, v in used.kernel) < 0.4, "this process's own work was counted as the kernel's"
    threads = kernel_threads()
    assert "python" not in " ".join(threads) and all(v >= 0 for v in threads.values())
    later = Cpu(busy=4.0, idle=4.0, kernel=(("kdamond.0", 1.5), ("kworker", 0.5)))
    assert later - Cpu(kernel=(("kdamond.0", 0.5),)) == Cpu(4.0, 4.0, 0.0, (("kdamond.0", 1.0), ("kworker", 0.5)))
    assert Cpu(busy=9.0, idle=10.0, steal=1.0, kernel=(("kdamond.0", 1.0), ("kworker", 0.2))).shares() == (
        "idle 50 %, steal 5 %, kernel threads 6 % (kdamond.0 5 %)")
