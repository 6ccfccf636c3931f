"""A batch's workers forked from the shared sandbox server (sandbox/zygote.py), tested on the real server.

What must hold: a forked worker grades exactly as a worker started as a process of its own; it keeps
nothing of the server's but its imports (descriptors, working folder, temporary folder); it is
signalled and waited for as a subprocess is; it dies with the process that asked for it; and where
the server cannot fork it, the worker is started as before.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from autograder.batch.backends import Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from autograder.errors import ServerFailed
from autograder.sandbox import hugepages, zygote
from autograder.sandbox.client import SandboxServer
from tests.helpers import DEMO_COURSE, ROOT, wait_until

REF = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:  # gone
        return ""


def _backend(tmp_path: Path, workers: int = 1) -> ProcessBackend:
    backend = ProcessBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True),
                             workers, tmp_path / "logs", warm_up=True)
    (tmp_path / "logs").mkdir(exist_ok=True)
    return backend


def _grade(backend: ProcessBackend, sub: Path, n: int) -> dict[str, Any]:
    got: dict[str, Any] = {}
    backend.grade_jobs([Job(id=str(i), name=f"s{i}.py", path=sub) for i in range(n)],
                       lambda job, result, error, worker: got.setdefault(job.id, (result, error)))
    return got


def _scores(result: dict[str, Any]) -> dict[str, float]:
    return {e["id"]: sum(t["points"] for t in e["tests"]) for e in result["exercises"]}


def test_a_forked_worker_grades_as_a_started_one_and_keeps_nothing_of_the_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the server runs with a clean environment: the worker must not
    monkeypatch.chdir(tmp_path)
    forked = _backend(tmp_path)
    try:
        pipe = forked.start(0)
        worker = pipe.proc.pid
        server = forked._server
        assert server is not None and server.proc is not None
        assert _comm(worker) == "tg-judge" and _parent(_parent(worker)) == server.proc.pid
        assert os.readlink(f"/proc/{worker}/cwd") == str(tmp_path)
        sockets = [fd for fd in os.listdir(f"/proc/{worker}/fd")
                   if os.readlink(f"/proc/{worker}/fd/{fd}").startswith("socket:")]
        assert len(sockets) == 1, "the worker holds its own connection to the server and none of the server's"
        assert list(tmp.glob("torchgrader-worker-*")), "the worker's folder is in the TMPDIR the backend has"
        pipe.close()
        got = _grade(forked, sub, 2)
    finally:
        forked.kill_all()
        forked.close()
    started = ProcessBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True), 1,
                             tmp_path / "logs")  # one job per worker: started as a process of its own
    try:
        alone = _grade(started, sub, 1)
    finally:
        started.close()
    assert all(r is not None for r, _ in got.values())
    assert {_scores(r)["basics"] for r, _ in got.values()} == {_scores(alone["0"][0])["basics"]}
    assert _scores(got["0"][0]) == _scores(alone["0"][0])


def test_a_killed_forked_worker_is_waited_for_as_a_subprocess_and_replaced(tmp_path: Path):
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    backend = _backend(tmp_path)
    try:
        pipe = backend.start(0)
        pid = pipe.proc.pid
        os.kill(pid, signal.SIGKILL)
        assert pipe.proc.wait(timeout=30) == -signal.SIGKILL  # its exit status, as Popen gives it
        assert not pipe.alive
        got = _grade(backend, sub, 2)  # the slot starts a new one
    finally:
        backend.kill_all()
        backend.close()
    assert all(r is not None and not e for r, e in got.values())


def test_a_forked_worker_dies_with_the_process_that_asked_for_it(tmp_path: Path):
    """The worker is the server's grandchild, not the backend's child: the waiter between them kills it when
    the backend's process dies (SIGKILL: no clean-up of its own)."""
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from autograder.batch.backends.config import WorkerConfig
        from autograder.batch.backends.process import ProcessBackend
        b = ProcessBackend(WorkerConfig(course={str(DEMO_COURSE)!r}, assignment="demo", allow_unisolated=True), 1,
                           None, warm_up=True)
        pipe = b.start(0)
        Path({str(pid_file)!r}).write_text(str(pipe.proc.pid))
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text(), 120), "the forked worker never started"
        worker = int(pid_file.read_text())
        assert _comm(worker) == "tg-judge"
        proc.kill()
        proc.wait()
        assert wait_until(lambda: _comm(worker) != "tg-judge", 30), \
            "the forked worker outlived the backend's process"
    finally:
        proc.kill()
        proc.wait()


def test_where_the_server_cannot_fork_the_worker_is_started_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def refuse(self, *args, **kwargs):
        raise ServerFailed("refused for the test")

    monkeypatch.setattr(SandboxServer, "fork_worker", refuse)
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    backend = _backend(tmp_path)
    try:
        pipe = backend.start(0)
        assert isinstance(pipe.proc, subprocess.Popen) and _parent(pipe.proc.pid) == os.getpid()
        pipe.close()
        got = _grade(backend, sub, 2)
    finally:
        backend.kill_all()
        backend.close()
    assert all(r is not None for r, _ in got.values())


def test_the_status_pipe_gives_the_pid_then_the_exit_status_even_when_both_come_at_once():
    r, w = os.pipe()
    os.write(w, b'{"pid": 4194304}\n{"exit": 3}\n')
    os.close(w)
    pid, rest = zygote.read_pid(r, timeout=5)
    assert pid == 4194304
    with open(os.devnull, "wb") as stdin, open(os.devnull, "rb") as stdout:
        assert zygote.ForkedWorker(stdin, stdout, r, pid, rest).wait(5) == 3

    r, w = os.pipe()
    os.write(w, b"not json\n")
    os.close(w)
    assert zygote.read_pid(r, timeout=5) == (None, b"")  # the backend then starts the worker itself
    os.close(r)


def test_the_heap_is_folded_in_chunks_of_at_most_the_step_size(monkeypatch: pytest.MonkeyPatch):
    """A warm-up between requests folds one chunk per step: no spawn waits for the whole fold (seconds)."""
    huge = hugepages.HUGE
    monkeypatch.setattr(hugepages, "dense_regions", lambda smaps: [(huge // 2, 9 * huge + 5), (20 * huge, 21 * huge)])
    cut = hugepages.chunks(4 * huge)
    assert cut == [(huge, 5 * huge), (5 * huge, 9 * huge), (20 * huge, 21 * huge)]
    assert hugepages.chunks() == [(huge, 9 * huge), (20 * huge, 21 * huge)]
    assert all(lo % huge == 0 and hi % huge == 0 and hi - lo <= 4 * huge for lo, hi in cut)


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "kernel-before-5.3"])
def test_the_waiter_reports_the_exit_status_and_kills_the_worker_when_the_backend_goes(
        monkeypatch: pytest.MonkeyPatch, pidfd: bool):
    """The waiter's loop, run here on a child of this test: it gives the child's exit status as Popen does,
    and kills it when the reading end of the status pipe closes (the backend's process died). Without
    pidfds (kernels before 5.3) it looks every second instead."""
    if not pidfd:
        def no_pidfd(pid: int, flags: int = 0) -> int:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    child = os.fork()
    if child == 0:
        os._exit(7)
    r, w = os.pipe()
    assert zygote._wait(child, w) == 7
    child = os.fork()
    if child == 0:
        os.close(r)  # the pipe is the waiter's and the backend's, never the worker's
        os.close(w)
        time.sleep(120)
        os._exit(0)
    os.close(r)  # the backend's end: gone
    started = time.monotonic()
    assert zygote._wait(child, w) == -signal.SIGKILL and time.monotonic() - started < 30
    os.close(w)


def test_a_forked_worker_is_killed_without_a_pidfd_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Where the backend cannot open a pidfd (a kernel before 5.3), kill() signals the pid, which stays the
    worker's until its waiter reports it gone."""
    def no_pidfd(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    backend = _backend(tmp_path)
    try:
        pipe = backend.start(0)
        pipe.kill()
        assert pipe.proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        backend.kill_all()
        backend.close()
