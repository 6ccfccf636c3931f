"""Nothing hangs, and GPU work goes to GPU workers: the service's grading pool with real warm workers.

The pool runs in this process (no web server): a worker stopped with SIGSTOP in the middle of a job is
found by the watchdog, replaced, and its job graded once on the fresh worker. The routing of jobs that
ask for CUDA is the pool's claim logic over a real store, with slots that declare their devices.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

from autograder.batch.backends.process import ProcessBackend
from autograder.service.blobs import Blobs
from autograder.service.config import Policy, ServiceConfig
from autograder.service.grading import GradingPool, SlotState
from autograder.service.store import ServiceStore
from tests.batch.test_runner import REF
from tests.helpers import DEMO_COURSE, until

SLOW = REF + "\n# %%\nimport time\ntime.sleep(2)\n"  # long enough to be stopped in the middle


def _pool(tmp_path, cfg: ServiceConfig) -> GradingPool:
    store = ServiceStore(tmp_path / "s.sqlite")
    store.put_person("ann", "Ann")
    return GradingPool(cfg, store, Blobs(tmp_path / "subs"), tmp_path / "logs")


def _submit(pool: GradingPool, text: str, assignment: str = "demo") -> str:
    data = text.encode()
    sid = pool.store.add_submission("ann", assignment, pool.blobs.put(data), "py", "mine.py", len(data), 0,
                                    ["hidden"])
    pool.wake()
    return sid


def test_a_worker_stopped_mid_job_is_replaced_and_its_job_graded_once(tmp_path):
    # the demo's two exercises time out at 3 s each: the watchdog allows 6 s plus the margin
    cfg = ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE, workers=1, watchdog_margin=8.0)
    pool = _pool(tmp_path, cfg)
    pool.start()
    stopped = None
    try:
        slot = pool.slots[0]
        assert pool.limit("demo") == 14.0
        until(lambda: pool.health()[0], 240, "a ready worker")
        sid = _submit(pool, SLOW)
        until(lambda: slot.job is not None and slot.pid, 60, "the job to start")
        stopped = slot.pid
        assert os.getpriority(os.PRIO_PROCESS, stopped) == cfg.nice  # the worker yields the CPU to the web tier
        time.sleep(0.5)
        os.kill(stopped, signal.SIGSTOP)
        until(lambda: slot.stuck(), 30, "the dashboard to see the worker stuck")
        job = until(lambda: [j for j in pool.store.jobs_of(sid) if j.state == "done"], 120, "the job")[0]
        results = pool.store.results_of(sid)
        assert len(results) == 1 and pool.store.gradings() == {job.id: 1}  # graded once
        assert not results[0].needs_ta and results[0].total == results[0].max_total > 0
        assert job.tries == 1 and "watchdog stopped" in job.error and "14 s" in job.error
        assert job.enqueued <= job.started <= job.finished and job.worker.startswith("demo worker 0")
        assert slot.pid != stopped and slot.restarts == 1 and not slot.stuck()
        until(lambda: not os.path.exists(f"/proc/{stopped}") or _zombie(stopped), 30, "the stopped worker's end")
    finally:
        pool.stop()
        if stopped is not None and os.path.exists(f"/proc/{stopped}"):
            os.kill(stopped, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _gpu_course(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    toml = course / "assignments" / "demo" / "basics" / "exercise.toml"
    toml.write_text(toml.read_text() + "gpu = true\n")
    return course


def test_jobs_that_ask_for_cuda_go_only_to_a_worker_that_declares_a_gpu(tmp_path):
    cfg = ServiceConfig(assignments=[Policy("demo", cpu_fallback=False)], course=_gpu_course(tmp_path), workers=2,
                        devices=["cpu", "cuda:0"])
    pool = _pool(tmp_path, cfg)
    pool.load()
    cpu = SlotState("demo worker 0", "demo", state="ready", device="cpu")
    gpu = SlotState("demo worker 1", "demo", state="ready", device="cuda:0")
    pool.slots = [cpu, gpu]
    first = _submit(pool, REF)
    assert pool.gpu_exercises("demo") == ["basics"]
    assert pool._claim(cpu) is None  # a CPU worker never takes it while a GPU worker runs
    job = pool._claim(gpu)
    assert job.submission == first and job.note == "" and "(cuda:0)" in job.worker
    # no GPU worker at all: the submission waits, and the dashboard says why
    pool.slots = [cpu]
    second = _submit(pool, REF)
    assert pool._claim(cpu) is None
    why = pool.blocked("demo")
    assert "asks for CUDA (basics)" in why and "no worker declares a GPU" in why and "cpu_fallback" in why
    # the course allows the CPU fallback: a CPU worker takes it, and the student is told
    cfg.assignments[0].cpu_fallback = True
    job = pool._claim(cpu)
    assert job.submission == second and job.note.startswith("Graded on CPU: basics asks for a GPU")
    assert pool.blocked("demo") == ""


def test_a_workers_declared_device_is_the_only_one_its_sandboxes_see():
    from autograder.batch.backends.config import WorkerConfig

    config = WorkerConfig(course=str(DEMO_COURSE), assignment="demo")
    assert ProcessBackend(config, 1, device="cpu").env()["CUDA_VISIBLE_DEVICES"] == ""
    assert ProcessBackend(config, 1, device="cuda:1").device_env() == {"CUDA_VISIBLE_DEVICES": "1"}
    assert ProcessBackend(config, 1).device_env() == {}  # the batch: the host's devices as they are
