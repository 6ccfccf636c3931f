"""The service beside a real Dask cluster: a scheduler and two workers, each its own process with a nanny.

As on separate hosts, the service reaches them only through the scheduler's address. One worker declares a
GPU (``--resources GPU=1``): an assignment that asks for CUDA is graded there and nowhere else. A worker
killed in the middle of a job costs that job only: it is graded once, on the other worker.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.batch.test_runner import REF
from tests.helpers import DEMO_COURSE, until
from tests.service.live import LiveServer, multipart

distributed = pytest.importorskip("distributed")

SLOW = REF + "\n# %%\nimport time\ntime.sleep(3)\n"


def _course(root: Path) -> Path:
    """The demo course, and a copy of its assignment (``demogpu``) whose first exercise asks for CUDA."""
    course = root / "course"
    shutil.copytree(DEMO_COURSE, course)
    for part in ("assignments", "solutions"):
        shutil.copytree(course / part / "demo", course / part / "demogpu")
    meta = course / "assignments" / "demogpu" / "assignment.toml"
    meta.write_text(meta.read_text().replace('id = "demo"', 'id = "demogpu"'))
    toml = course / "assignments" / "demogpu" / "basics" / "exercise.toml"
    toml.write_text(toml.read_text() + "gpu = true\n")
    return course


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask")
    sched_file = root / "scheduler.json"
    python = [sys.executable, "-m"]
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    logs = open(root / "dask.log", "ab")  # noqa: SIM115 - closed below
    procs = [subprocess.Popen([*python, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(sched_file)], stdout=logs, stderr=logs,
                              env=env, start_new_session=True)]
    try:
        until(sched_file.exists, 60, "the scheduler")
        address = json.loads(sched_file.read_text())["address"]
        for extra in (["--resources", "GPU=1", "--name", "gpu-worker"], ["--name", "cpu-worker"]):
            procs.append(subprocess.Popen([*python, "distributed.cli.dask_worker", address, "--nthreads", "1",
                                           "--nanny", "--no-dashboard", "--host", "127.0.0.1", *extra],
                                          stdout=logs, stderr=logs, env=env, start_new_session=True))
        client = distributed.Client(address, timeout=30)
        client.wait_for_workers(2, timeout=60)
        server = LiveServer(root, '[[assignments]]\nid = "demo"\n[[assignments]]\nid = "demogpu"\n'
                            "cpu_fallback = false\n", course=_course(root),
                            grading=f'backend = "dask"\nscheduler = "{address}"\n')
        server.start()
        yield client, server
        server.stop()
        client.close()
    finally:
        for p in reversed(procs):
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        logs.close()


def _pids(client) -> dict[str, int]:
    """Each Dask worker's name and the pid of its worker process (the nanny's child)."""
    names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
    return {names[a]: pid for a, pid in client.run(os.getpid).items()}


def _upload(server: LiveServer, who: str, text: str, assignment: str) -> str:
    body, headers = multipart("mine.py", text.encode())
    field = f'--tgtestboundary\r\nContent-Disposition: form-data; name="assignment"\r\n\r\n{assignment}\r\n'
    code, got = server.api("/api/submissions", who, field.encode() + body, headers)
    assert code == 202, got
    return got["id"]


def _job(server: LiveServer, sid: str) -> tuple:
    with server.db() as db:
        return db.execute("SELECT state, tries, worker FROM jobs WHERE submission = ?", (sid,)).fetchone()


def test_work_that_asks_for_cuda_is_graded_only_on_the_worker_that_declares_a_gpu(cluster):
    client, server = cluster
    pids = _pids(client)
    sid = _upload(server, "ann", REF, "demogpu")
    final = server.wait_status(sid, "ann", ("graded", "error"), timeout=120)
    assert final["status"] == "graded" and final["score"] == final["max_score"] > 0, final
    assert _job(server, sid)[2].endswith(f":{pids['gpu-worker']}")


def test_a_worker_killed_mid_job_costs_that_job_only_graded_once_on_the_other(cluster):
    client, server = cluster
    pids = _pids(client)
    sid = _upload(server, "ben", SLOW, "demo")
    busy = until(lambda: [a for a, keys in client.processing().items() if any("torchgrader-" in str(k)
                                                                               for k in keys)], 60, "the task")
    name = client.scheduler_info()["workers"][busy[0]]["name"]
    time.sleep(1.0)  # in the middle of the job
    os.kill(pids[name], signal.SIGKILL)
    final = server.wait_status(sid, "ben", ("graded", "error"), timeout=120)
    assert final["status"] == "graded" and final["score"] == final["max_score"] > 0, final
    other = next(n for n in pids if n != name)
    state, tries, worker = _job(server, sid)
    assert state == "done" and worker.endswith(f":{pids[other]}")
    with server.db() as db:
        assert db.execute("SELECT COUNT(*) FROM results WHERE submission = ?", (sid,)).fetchone()[0] == 1
        per_job = dict(db.execute("SELECT job, COUNT(*) FROM results GROUP BY job").fetchall())
    assert set(per_job.values()) == {1}
