"""The process backend's real worker: jobs that choose their own suites, graded by one warm worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autograder.batch.backends import Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from tests.helpers import DEMO_COURSE

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
