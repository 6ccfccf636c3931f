"""Memory per sandbox, not per process: each sandbox's whole tree lives in a cgroup of its own."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from autograder.sandbox import cgroups
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxNoReply, SandboxOutOfMemory, SandboxServer
from autograder.sandbox.isolation import Limits

HAVE = cgroups.open_cgroups(tag=0)
HAVE.close()
needs_cgroups = pytest.mark.skipif(not HAVE.available, reason=f"no cgroup can be made here: {HAVE.reason}")


def _cgroup_lines(pid: int) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        out[ctrls] = path
    return out


def _cgroup_dirs(pid: int) -> list[str]:
    """The directories of the sandbox cgroup that ``pid`` is in."""
    paths = _cgroup_lines(pid)
    mine = [p for p in paths.values() if "/torchgrader-" in p and "/sb-" in p]
    assert mine, paths
    found = [h for h in cgroups._hierarchies() if h.version == HAVE.version]
    return [
        os.path.join(h.mount, paths[k].lstrip("/"))
        for h in found
        for k in paths
        if paths[k] in mine and (h.version == 2 or set(k.split(",")) & h.controllers)
    ]


def _spawn_until_swept(server: SandboxServer, dirs: list[str], within: float = 60.0) -> None:
    """Spawn sandboxes until the server's sweep (at each spawn) has removed ``dirs``.

    A killed sandbox's cgroup goes only once its first process has left it, and a process
    that held gigabytes can take a while to be torn down on a loaded machine: a fixed number
    of spawns raced that teardown (it failed under CI's parallel tests). What is asserted is
    that the cgroup does go, in time, without anyone but the server removing it.
    """
    deadline = time.monotonic() + within
    while any(os.path.isdir(d) for d in dirs):
        assert time.monotonic() < deadline, f"the server never removed {dirs} in {within:.0f} s"
        Sandbox(server, SandboxConfig()).kill()
        time.sleep(0.1)


@needs_cgroups
def test_each_sandbox_gets_its_own_cgroup_with_the_limits_and_it_is_removed_afterwards(server):
    sb = Sandbox(server, SandboxConfig(limits=Limits(memory_bytes=3 * 2**30, max_processes=40)))
    try:
        assert "whole sandbox limited to 3.0 GiB" in sb.protections["memory"], sb.protections
        _, inside = sb.request("exec", "import os\nCG = open('/proc/self/cgroup').read()", cell=1, timeout=10)
        dirs = _cgroup_dirs(sb.pid)
        limits = {}
        for d in set(dirs):
            for name in ("memory.limit_in_bytes", "memory.max", "pids.max"):
                if os.path.exists(os.path.join(d, name)):
                    limits[name] = Path(d, name).read_text().strip()
        assert limits.get("memory.limit_in_bytes", limits.get("memory.max")) == str(3 * 2**30), limits
        if "pids.max" in limits:
            assert limits["pids.max"] == "40"
    finally:
        sb.kill()
    _spawn_until_swept(server, dirs)


# Each child stays under the per-process limit; together they hold 2.8 GiB, over a 2 GiB sandbox's.
FOUR_CHILDREN = (
    "import os, time, torch\n"
    "def hog():\n"
    "    r, w = os.pipe()\n"
    "    for _ in range(4):\n"
    "        if os.fork() == 0:\n"
    "            t = torch.ones(700 * 2**20, dtype=torch.uint8)\n"
    "            os.write(w, b'!')\n"
    "            time.sleep(120)\n"
    "            os._exit(0)\n"
    "    os.close(w)\n"
    "    got = b''\n"
    "    while len(got) < 4:  # until all four hold their memory at once\n"
    "        chunk = os.read(r, 4)\n"
    "        if not chunk:\n"
    "            break\n"
    "        got += chunk\n"
    "    return 'survived'\n"
)


@needs_cgroups
def test_children_that_together_exceed_the_limit_are_reported_as_out_of_memory(server):
    """Each child stays under the per-process limit; together they do not (the old RLIMIT_AS-only hole)."""
    sb = Sandbox(server, SandboxConfig(limits=Limits(memory_bytes=2 * 2**30)))
    try:
        sb.request("exec", FOUR_CHILDREN, cell=1, timeout=10)
        with pytest.raises(SandboxOutOfMemory, match="2.0 GiB"):
            sb.request("call", ([], {}), target=None, name="hog", timeout=60)
        assert not sb.alive
    finally:
        sb.kill()


def _judge_fds_on(path: str) -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == path
        except OSError:
            pass
    return count


@needs_cgroups
def test_a_child_killed_for_memory_after_its_parent_answered_is_read_from_the_counter_kept_open(server):
    """The judge reads the sandbox's OOM counter after every reply through one descriptor it keeps open
    (one pread, not an open and a close per request), closed with the sandbox: a memory kill in a child the
    first process waited for is still reported."""
    sb = Sandbox(server, SandboxConfig(limits=Limits(memory_bytes=2 * 2**30)))
    oom_file = os.path.realpath(sb._oom_file)
    code = (
        "import os, time, torch\n"
        "def hog():\n"
        "    kids = []\n"
        "    for _ in range(4):  # each under the per-process limit, together over the sandbox's\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            try:  # a child never answers the judge: it holds its memory a moment, then exits\n"
        "                t = torch.ones(700 * 2**20, dtype=torch.uint8)\n"
        "                time.sleep(3)\n"
        "            finally:\n"
        "                os._exit(0)\n"
        "        kids.append(pid)\n"
        "    for pid in kids:\n"
        "        os.waitpid(pid, 0)\n"
        "    return 'answered'\n"
    )
    try:
        sb.request("exec", code, cell=1, timeout=10)
        sb.request("exec", "X = 1", cell=2, timeout=10)
        assert _judge_fds_on(oom_file) == 1, "the counter is not kept open while the sandbox runs"
        with pytest.raises(SandboxOutOfMemory, match="2.0 GiB"):
            sb.request("call", ([], {}), target=None, name="hog", timeout=60)
        assert not sb.alive
    finally:
        sb.kill()
    assert _judge_fds_on(oom_file) == 0, "the counter's descriptor outlived its sandbox"


def test_the_counter_kept_open_reads_each_value_afresh_and_reads_by_path_once_closed(tmp_path):
    path = tmp_path / "memory.events"
    path.write_text("oom 0\noom_kill 0\n")
    counter = cgroups.OomCounter(str(path))
    assert counter.value() == 0
    with open(path, "r+") as f:  # rewritten in place, as the kernel does at every read
        f.write("oom 4\noom_kill 4\n")
    assert counter.value() == 4
    counter.close()
    assert _judge_fds_on(str(path)) == 0
    path.write_text("oom 5\noom_kill 5\n")  # a new file at the same path: read by path now
    assert counter.value() == 5 and _judge_fds_on(str(path)) == 0
    assert cgroups.OomCounter(str(tmp_path / "gone")).value() == 0


def test_without_a_cgroup_the_report_says_the_limit_is_per_process(monkeypatch):
    monkeypatch.setenv("TORCHGRADER_NO_CGROUPS", "1")
    got = cgroups.open_cgroups(tag=1)
    assert not got.available and "TORCHGRADER_NO_CGROUPS" in got.reason
    text = cgroups.per_process_report(6 * 2**30, got.reason)
    assert text.startswith("per process only") and "6.0 GiB" in text and "multiple" in text
    monkeypatch.setenv("TORCHGRADER_CONTAINER_MEMORY", "8")  # set by the docker backend
    text = cgroups.per_process_report(6 * 2**30, got.reason)
    assert text.startswith("per container") and "8.0 GiB by docker" in text


def test_oom_counters_are_read_from_both_layouts(tmp_path):
    v1 = tmp_path / "memory.oom_control"
    v1.write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    v2 = tmp_path / "memory.events"
    v2.write_text("low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 1\n")
    assert cgroups.oom_kills(str(v1)) == 3 and cgroups.oom_kills(str(v2)) == 2
    assert cgroups.oom_kills(str(tmp_path / "gone")) == 0


def test_a_cgroup_v2_layout_gets_a_parent_with_controllers_and_per_sandbox_limits(tmp_path, monkeypatch):
    """The v2 path, on a stand-in tree (this host mounts v1): the files the kernel would read are written."""
    mount = tmp_path / "cg"
    own = mount / "user.slice" / "grader.scope"
    own.mkdir(parents=True)
    for d in (mount, own):
        (d / "cgroup.controllers").write_text("cpu memory pids\n")
        (d / "cgroup.subtree_control").write_text("")
    (tmp_path / "mountinfo").write_text(f"30 1 0:26 / {mount} rw,nosuid - cgroup2 cgroup2 rw\n")
    (tmp_path / "cgroup").write_text("0::/user.slice/grader.scope\n")
    monkeypatch.setattr(cgroups, "MOUNTINFO", str(tmp_path / "mountinfo"))
    monkeypatch.setattr(cgroups, "PROC_CGROUP", str(tmp_path / "cgroup"))
    monkeypatch.delenv("TORCHGRADER_NO_CGROUPS", raising=False)
    got = cgroups.open_cgroups(tag=4242)
    assert got.version == 2 and got.parents == [str(own / "torchgrader-4242")], got
    assert "+memory" in (own / "cgroup.subtree_control").read_text()
    sb = got.create(2**30, 32)
    d = Path(sb.dirs[0])
    assert (d / "memory.max").read_text() == str(2**30) and (d / "pids.max").read_text() == "32"
    assert (d / "memory.oom.group").read_text() == "1" and (d / "memory.swap.max").read_text() == "0"
    assert sb.oom_file == str(d / "memory.events")
    assert "cgroup v2" in sb.report(2**30, 32)


@needs_cgroups
def test_a_server_closed_while_it_imports_for_later_sandboxes_still_removes_the_cgroups():
    """Closing stops the imports for later sandboxes (scikit-learn, the compiler warm-up), not the clean-up."""
    server = SandboxServer(warm_compiler=True)
    try:
        sb = Sandbox(server, SandboxConfig())
        dirs = _cgroup_dirs(sb.pid)
        assert any(os.path.isdir(d) for d in dirs)
        sb.kill()
        server.warm_later()  # the server now imports what only later sandboxes use
    finally:
        server.close()
    assert server.proc.returncode == 0
    assert not any(os.path.isdir(d) for d in dirs), dirs


STALL = (
    "import os, time, torch\n"
    "def hold_and_read(path, children):\n"
    "    r, w = os.pipe()\n"
    "    for _ in range(children):  # 500 MiB each, held: memory the kernel cannot take back\n"
    "        if os.fork() == 0:\n"
    "            t = torch.ones(500 * 2**20, dtype=torch.uint8)\n"
    "            os.write(w, b'!')\n"
    "            time.sleep(120)\n"
    "            os._exit(0)\n"
    "    os.close(w)\n"
    "    got = b''\n"
    "    while len(got) < children:\n"
    "        got += os.read(r, 8)\n"
    "    buf = bytearray(2**20)\n"
    "    while True:  # the file's pages are reclaimed and read again: the kernel never has to kill\n"
    "        with open(path, 'rb', buffering=0) as f:\n"
    "            while f.readinto(buf):\n"
    "                pass\n"
)


def _drop_from_page_cache(path: Path) -> None:
    """So that the sandbox's reads bring the file's pages in again, charged to its own cgroup."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@needs_cgroups
@pytest.mark.parametrize("children", [0, 3])
def test_a_sandbox_still_at_its_memory_limit_when_its_time_runs_out_is_reported_as_out_of_memory(
        server, tmp_path, children):
    """The kernel reclaims before it kills: code that holds most of the limit and keeps reading a file
    crawls at the limit, no process is ever killed, and the test's time runs out. That is a memory problem
    (the CI host once stalled six memory-hungry children for 15 s without a kill), not an infinite loop.
    The same loop with memory to spare is an ordinary timeout."""
    data = tmp_path / "data"
    data.mkdir()
    big = data / "big.bin"
    with open(big, "wb") as f:  # 1 GiB of page cache to read, without writing 1 GiB to disk
        f.truncate(2**30)
    sb = Sandbox(server, SandboxConfig(limits=Limits(memory_bytes=2 * 2**30), extra_read_only=[str(data)]))
    try:
        sb.request("exec", STALL, cell=1, timeout=10)
        _drop_from_page_cache(big)
        expected = SandboxOutOfMemory if children else SandboxNoReply
        with pytest.raises(expected) as got:
            sb.request("call", ([str(big), children], {}), target=None, name="hold_and_read", timeout=6)
        assert not sb.alive
        if children:
            assert "at its memory limit of 2.0 GiB when the time ran out" in str(got.value)
            assert not sb.out_of_memory(), "a process was killed: this is not the stall it means to test"
    finally:
        sb.kill()


@needs_cgroups
def test_a_memory_kill_is_still_known_after_the_server_removed_the_sandboxs_cgroup(server):
    """The judge asks why a sandbox died after killing it; by then the server may have swept its cgroup
    (at any other sandbox's start). The count read as the counter closed still says it was memory."""
    sb = Sandbox(server, SandboxConfig(limits=Limits(memory_bytes=2 * 2**30)))
    dirs = _cgroup_dirs(sb.pid)
    try:
        sb.request("exec", FOUR_CHILDREN, cell=1, timeout=10)
        with pytest.raises(SandboxOutOfMemory):
            sb.request("call", ([], {}), target=None, name="hog", timeout=60)
    finally:
        sb.kill()
    _spawn_until_swept(server, dirs)
    assert sb.out_of_memory()


def _layouts(tmp_path: Path) -> tuple[Path, Path]:
    """Two folders standing for a sandbox's memory cgroup: cgroup v1's, then v2's."""
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    v1.mkdir()
    v2.mkdir()
    return v1, v2


def test_memory_in_use_is_read_beside_the_oom_file_of_either_layout(tmp_path):
    v1, v2 = _layouts(tmp_path)
    (v1 / "memory.usage_in_bytes").write_text("123\n")
    (v2 / "memory.current").write_text("456\n")
    assert cgroups.memory_in_use(str(v1 / "memory.oom_control")) == 123
    assert cgroups.memory_in_use(str(v2 / "memory.events")) == 456
    assert cgroups.memory_in_use(str(tmp_path / "gone" / "memory.events")) is None


def test_a_memory_limit_is_set_beside_the_oom_file_of_either_layout(tmp_path):
    """v2 writes memory.max; v1 memory.limit_in_bytes and, where there is one, memory.memsw.limit_in_bytes."""
    v1, v2 = _layouts(tmp_path)
    (v1 / "memory.limit_in_bytes").write_text("6442450944\n")
    (v1 / "memory.memsw.limit_in_bytes").write_text("6442450944\n")
    (v2 / "memory.max").write_text("6442450944\n")
    for target in (1 << 30, 3 << 30):  # lowering, then raising: both files follow, in either order
        assert cgroups.set_memory_limit(str(v1 / "memory.oom_control"), target)
        assert cgroups.set_memory_limit(str(v2 / "memory.events"), target)
        assert int((v1 / "memory.limit_in_bytes").read_text()) == target
        assert int((v1 / "memory.memsw.limit_in_bytes").read_text()) == target
        assert int((v2 / "memory.max").read_text()) == target
    assert not cgroups.set_memory_limit(str(tmp_path / "gone" / "memory.events"), 1 << 30)
