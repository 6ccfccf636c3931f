"""The sandbox server's heap is folded into huge pages, so that a sandbox's fork copies few page-table entries.

A speed-up only (issue 25): where the kernel cannot collapse memory the server
runs as before, and these tests say so when they skip.
"""

from __future__ import annotations

import ctypes
import mmap

import pytest

from autograder.sandbox import hugepages
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer


def _private(size: int) -> mmap.mmap:
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)


def _kernel_collapses() -> str | None:
    """None when this kernel folds a test mapping into a huge page; otherwise why not."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            if "[never]" in f.read():
                return "transparent huge pages are off on this host ([never])"
    except OSError:
        return "this kernel has no transparent huge pages"
    region = _private(4 * hugepages.HUGE)
    region.write(b"x" * len(region))
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    lo = (address + hugepages.HUGE - 1) & ~(hugepages.HUGE - 1)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    ok = libc.madvise(lo, hugepages.HUGE, hugepages.MADV_COLLAPSE) == 0
    errno = ctypes.get_errno()
    del address
    return None if ok else f"madvise(MADV_COLLAPSE) is refused here (errno {errno})"


def _anon_huge_kib(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return 0


def test_a_warmed_up_servers_heap_is_in_huge_pages():
    """A server asked to warm up (a batch's second submission, a kernel's later checks) will fork many
    sandboxes: it folds its heap before the next one. One that serves a single submission does not."""
    why = _kernel_collapses()
    if why:
        pytest.skip(why)
    with SandboxServer(warm_compiler=False) as server:
        server.wait_ready()
        Sandbox(server, SandboxConfig()).kill()
        before = _anon_huge_kib(server.proc.pid)
        server.warm_later(only=["sklearn.datasets"])
        Sandbox(server, SandboxConfig()).kill()  # served once the warm-up and the fold are done
        after = _anon_huge_kib(server.proc.pid)
    assert before < 16 * 1024, f"a server that was not warmed up folded {before} KiB already"
    assert after >= 64 * 1024, f"only {after} KiB of a warmed-up server's heap is in huge pages"


SMAPS = """\
55d0a0000000-55d0a1000000 rw-p 00000000 00:00 0                          [heap]
Rss:               16000 kB
7f0000000000-7f0002000000 rw-p 00000000 00:00 0
Size:              32768 kB
Rss:                  40 kB
7f1000000000-7f1000800000 rw-p 00000000 00:00 0
Rss:                8192 kB
7f2000000000-7f2000800000 rw-s 00000000 00:01 12                         /dev/zero (deleted)
Rss:                8192 kB
7f3000000000-7f3000800000 rw-p 00100000 08:01 99                         /usr/lib/libtorch_cpu.so
Rss:                8192 kB
7f4000000000-7f4000800000 r--p 00000000 00:00 0
Rss:                8192 kB
7f5000000000-7f5000100000 rw-p 00000000 00:00 0
Rss:                1024 kB
"""


def test_only_dense_private_anonymous_mappings_are_chosen():
    """A sparse mapping would grow to whole huge pages; shared, file-backed, read-only and small ones are left."""
    assert hugepages.dense_regions(SMAPS.splitlines()) == [
        (0x55D0A0000000, 0x55D0A1000000),  # the heap, 16 MB of 16 MB resident
        (0x7F1000000000, 0x7F1000800000),  # 8 MB, all resident
    ]
