"""The process backend's real worker: jobs that choose their own suites, graded by one warm worker."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from autograder.batch.backends import Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from tests.helpers import DEMO_COURSE, children_of, wait_until

REF = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)


class Counting(ProcessBackend):
    """The real backend, counting the worker processes it starts."""

    started = 0

    def start(self, slot: int):
        Counting.started += 1
        return super().start(slot)


def _tests(result: dict[str, Any]) -> dict[str, list[str]]:
    return {e["id"]: sorted(t["name"] for t in e["tests"]) for e in result["exercises"] if e["tests"]}


def test_one_worker_grades_each_job_on_the_suites_it_asks_for(tmp_path: Path):
    """Options change from job to job and back: each result has exactly its job's suites, one worker did all."""
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    asks: list[dict[str, Any] | None] = [
        None,  # the workers' settings: every hidden suite
        {"exercises": ["basics"], "public": False},
        {"exercises": ["basics"], "public": False},
        {"exercises": None, "public": True},
        {"exercises": ["counter"], "public": False},
        None,
    ]
    jobs = [Job(id=str(i), name=f"s{i}.py", path=sub, options=o) for i, o in enumerate(asks)]
    got: dict[str, tuple[dict[str, Any] | None, str, str]] = {}
    Counting.started = 0
    backend = Counting(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True), 1, tmp_path)
    try:
        backend.grade_jobs(jobs, lambda job, result, error, worker: got.setdefault(job.id, (result, error, worker)))
    finally:
        backend.close()
    assert Counting.started == 1 and {w for _, _, w in got.values()} == {"worker 0"}
    results = {k: r for k, (r, error, _) in got.items() if r is not None}
    assert sorted(results) == [str(i) for i in range(len(asks))], got
    hidden = _tests(results["0"])
    assert set(hidden) == {"basics", "counter"} and _tests(results["5"]) == hidden
    assert _tests(results["1"]) == _tests(results["2"]) == {"basics": hidden["basics"]}
    assert _tests(results["4"]) == {"counter": hidden["counter"]}
    public = _tests(results["3"])
    assert set(public) == {"basics", "counter"} and public != hidden  # the public suites, not the hidden ones
    for r in results.values():  # the reference earns everything it is graded on
        assert all(t["status"] == "passed" for e in r["exercises"] for t in e["tests"]), r


def test_a_job_may_choose_only_its_suites():
    with pytest.raises(ValueError, match="a job may set only exercises, public, not isolate"):
        Job(id="1", name="a.py", path=Path("a.py"), options={"isolate": False})


def test_a_worker_whose_sandbox_server_never_starts_says_so_as_fatal(tmp_path: Path, monkeypatch):
    """The worker reads its first job before waiting for its server; a server that never became ready must
    still end the batch with why (a fatal line), not a result that scores the submission 0."""
    import base64
    import io
    import json

    import autograder.warmup
    from autograder import gcpause
    from autograder.batch.backends.worker import Worker
    from autograder.options import GradeOptions
    from autograder.sandbox.client import SandboxServer

    def dead_server(assignment, options):
        server = SandboxServer(warm_compiler=False)
        server.proc.kill()
        server.proc.wait()
        return server

    monkeypatch.setattr(autograder.warmup, "start_server", dead_server)  # where the worker takes it from
    job = {"id": "1", "name": "ref.py", "data": base64.b64encode(REF.encode()).decode()}
    proto = io.StringIO()
    cfg = WorkerConfig(course=str(DEMO_COURSE), assignment="demo", options=GradeOptions(), judge_memory_gb=0)
    try:
        code = Worker(cfg, io.StringIO(json.dumps(job) + "\n"), proto).serve()
    finally:
        gcpause.resume()  # serve() paused this process's collector, as in a worker
    lines = [json.loads(line) for line in proto.getvalue().splitlines()]
    assert code == 2
    assert lines[-1] == {"fatal": "the sandbox server could not start: the sandbox server failed to start "
                                  "(see the errors above)"}, lines
    assert not any("result" in line for line in lines)


def _sandbox_servers() -> dict[int, int]:
    """pid -> parent pid of every sandbox server process started below this one (not a server's forks: keepers
    and sandboxes; not another test process's servers)."""
    procs: dict[int, tuple[int, bool]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    is_server = b"autograder.sandbox.server" in f.read()
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            procs[int(entry)] = (ppid, is_server)

    def mine(pid: int) -> bool:
        while pid > 1:
            pid = procs.get(pid, (0, False))[0]
            if pid == os.getpid():
                return True
        return False

    return {pid: ppid for pid, (ppid, is_server) in procs.items()
            if is_server and not procs.get(ppid, (0, False))[1] and mine(pid)}


def test_the_workers_share_one_sandbox_server_and_a_killed_one_leaves_no_sandbox(tmp_path: Path):
    """Two workers, one server: started by the backend (this process), none by a worker. A worker killed
    while it waits (as when a job's time is up) takes its sandboxes with it; the server stays for the next."""
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    mine = {pid for pid, ppid in _sandbox_servers().items() if ppid == os.getpid()}  # the session fixture's
    seen: dict[int, int] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update({p: pp for p, pp in _sandbox_servers().items() if p not in mine})
            time.sleep(0.05)

    backend = ProcessBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True), 2,
                             tmp_path)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    got: dict[str, Any] = {}
    try:
        jobs = [Job(id=str(i), name=f"s{i}.py", path=sub) for i in range(4)]
        backend.grade_jobs(jobs, lambda job, result, error, worker: got.setdefault(job.id, (result, worker)))
        assert {w for _, w in got.values()} == {"worker 0", "worker 1"} and all(r for r, _ in got.values())
        done.set()
        watcher.join()
        assert len(seen) == 1 and set(seen.values()) == {os.getpid()}, seen  # one server, the backend's
        server = next(iter(seen))
        pipe = backend.start(0)
        result = pipe.grade(Job(id="again", name="again.py", path=sub), 120)  # a new worker, the same server
        assert result["exercises"] and _sandbox_servers().get(server) == os.getpid()
        below = _below(server)
        assert below, "the worker's spare sandbox should be waiting"
        pipe.kill()
        assert wait_until(lambda: not _below(server), 15), "a killed worker's sandboxes outlived it"
    finally:
        done.set()
        backend.kill_all()
        backend.close()
    assert server not in _sandbox_servers()  # closed with the backend


def _below(pid: int) -> list[int]:
    """The living processes whose parent is ``pid`` (a server's keepers, a worker's copy of its judge)."""
    return children_of(pid)


@pytest.mark.parametrize(("jobs", "workers", "warmed"), [(3, 2, True), (2, 2, False)])
def test_the_shared_server_warms_up_at_once_only_when_a_worker_will_grade_more_than_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, workers: int, warmed: bool):
    """More jobs than workers: some worker grades a second submission, so the server warms up as the batch
    starts (between the judges' requests) rather than when a second submission arrives. A job per worker:
    each grades one, as a lone submission, and nothing warms up."""
    from autograder.sandbox.client import SandboxServer

    asked: list[bool] = []
    real, real_fork = SandboxServer.connect_judge, SandboxServer.fork_worker

    def connect_judge(self, *, warm_up: bool = False):
        asked.append(warm_up)
        return real(self, warm_up=warm_up)

    def fork_worker(self, *args, warm_up: bool = False):
        asked.append(warm_up)
        return real_fork(self, *args, warm_up=warm_up)

    monkeypatch.setattr(SandboxServer, "connect_judge", connect_judge)
    monkeypatch.setattr(SandboxServer, "fork_worker", fork_worker)
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    backend = ProcessBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True),
                             workers, tmp_path)
    got: dict[str, Any] = {}
    try:
        backend.grade_jobs([Job(id=str(i), name=f"s{i}.py", path=sub) for i in range(jobs)],
                           lambda job, result, error, worker: got.setdefault(job.id, result))
    finally:
        backend.kill_all()
        backend.close()
    assert len(got) == jobs and all(got.values())
    assert asked == [warmed] * workers


@pytest.mark.parametrize(("jobs", "workers", "sandboxes"), [(1, 2, 2), (2, 2, 1)])
def test_a_lone_submission_is_shared_with_a_copy_of_its_judge_and_a_class_is_not(
        tmp_path: Path, jobs: int, workers: int, sandboxes: int):
    """Fewer submissions than workers: the idle core grades the later exercises (judge/spread.py), in a
    sandbox of its own, so the two exercises print two tokens; a job per worker keeps one judge each."""
    import re

    from tests.judge.test_spread import TOKENS

    sub = tmp_path / "tokens.py"
    sub.write_text(TOKENS)
    backend = ProcessBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True),
                             workers, tmp_path)
    got: dict[str, Any] = {}
    todo = [Job(id=str(i), name=f"s{i}.py", path=sub) for i in range(jobs)]
    try:
        backend.grade_jobs(todo, lambda job, result, error, worker: got.setdefault(job.id, result))
    finally:
        backend.kill_all()
        backend.close()
    assert [j.spread for j in todo] == [sandboxes] * jobs
    for result in got.values():
        assert result["total"] == result["max_total"] == 6, result
        tokens = set(re.findall(r"in ([0-9a-f]{32})", result["output"]))
        assert len(tokens) == sandboxes, result["output"]


def test_a_killed_worker_takes_the_copy_of_its_judge_and_its_sandboxes_with_it(tmp_path: Path):
    """A lone submission's worker killed while its copy grades the later exercise (as when a job's time is
    up): the copy dies with it, and so do the sandboxes of both."""
    hang = REF.replace("    def add(self, n):\n", "    def add(self, n):\n        import time; time.sleep(60)\n")
    sub = tmp_path / "hang.py"
    sub.write_text(hang)
    backend = ProcessBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo", allow_unisolated=True), 2,
                             tmp_path)
    grading = threading.Thread(target=backend.grade_jobs, daemon=True,
                               args=([Job(id="0", name="hang.py", path=sub)], lambda *a: None))
    grading.start()
    try:
        wait_until(lambda: backend._pipes and _below(backend._pipes[0].proc.pid), 60)
        worker = backend._pipes[0].proc.pid
        copies = _below(worker)
        assert copies, "the lone submission's judge never forked its copy"
        server = backend._server.proc.pid if backend._server is not None and backend._server.proc else None
        assert server is not None
        assert wait_until(lambda: _below(server), 60)  # the sandboxes' keepers, once the server has started them
        time.sleep(0.5)  # the copy is in its hanging test by now, or on its way there
        backend.kill_all()
        # well before its hanging test's own limit (3 s) would end it
        assert wait_until(lambda: not _alive(copies), 1.5), "the copy outlived its judge"
        assert wait_until(lambda: not _below(server), 15), "a sandbox outlived its judges"
    finally:
        backend.kill_all()
        grading.join(30)
        backend.close()


def _alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    out.append(pid)
        except OSError:
            pass
    return out
