"""The peak resident memory of a sandbox's process tree, sampled from ``/proc`` by the judge.

Where no cgroup holds the sandbox (inside the documented ``docker run`` line, whose cgroup file system is
read-only; an ordinary user without a delegated cgroup), the kernel's cgroup peak cannot be read. The judge
then samples, every millisecond while one probe runs, the resident memory the kernel counts for each process
of the sandbox's tree (``/proc/PID/statm``, the tree from ``/proc/PID/task/TID/children``). It is still a
measurement outside the student's process: student code cannot make the kernel count fewer pages, and a
child process is counted as soon as it exists. What it can miss is a peak shorter than the sampling period;
the tests that rest on it (``sandbox.peak_memory``) measure graphs that stay alive for a whole backward pass
or a whole epoch, many periods long (docs/threat-model.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

PAGE = os.sysconf("SC_PAGE_SIZE")
PERIOD = 0.001  # seconds between two samples


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def tree_resident(root: int) -> int | None:
    """Bytes resident in ``root`` and every process below it; None when ``root`` is gone or unreadable."""
    total, seen, todo = 0, set(), [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            if pid == root:
                return None
            continue  # a child that exited between the listing and the read
        todo += _children(pid)
    return total


def children_listed() -> bool:
    """The kernel lists a process's children (CONFIG_PROC_CHILDREN): without it, a child would go uncounted."""
    return os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def cgroup_current(path: str) -> Callable[[], int | None]:
    """A reader of a cgroup's memory now (``memory.current`` on v2, ``memory.usage_in_bytes`` on v1)."""
    def read() -> int | None:
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None
    return read


class SampledPeak:
    """The most memory the sandbox held during one call, less what it held as the call began.

    The same interface as :class:`autograder.sandbox.cgroups.PeakMemory`: ``start``, then the call, then
    ``growth``. A thread of the judge samples; the judge's main thread meanwhile waits on the sandbox's socket.
    What is sampled: the resident memory of the sandbox's process tree (no cgroup), or the cgroup's memory now
    where a cgroup holds the sandbox but its peak cannot be reset (cgroup v2 before Linux 6.12).
    """

    def __init__(self, root_pid: int, period: float = PERIOD, read: Callable[[], int | None] | None = None) -> None:
        self.root = root_pid
        self.read: Callable[[], int | None] = read or (lambda: tree_resident(root_pid))
        self.period = period
        self.before = 0
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost = False

    def start(self) -> bool:
        if not children_listed():
            return False
        now = self.read()
        if now is None:
            return False
        self.before = self.peak = now
        self._thread = threading.Thread(target=self._sample, name="sampled-peak", daemon=True)
        self._thread.start()
        return True

    def _sample(self) -> None:
        while not self._stop.wait(self.period):
            now = self.read()
            if now is None:
                self._lost = True
                return
            self.samples += 1
            self.peak = max(self.peak, now)

    def growth(self) -> int | None:
        """Peak bytes since :meth:`start` less what was held then; None when the sandbox went away meanwhile."""
        self.close()
        now = self.read()  # the last moment counts too
        if now is None or self._lost:
            return None
        return max(0, max(self.peak, now) - self.before)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
