"""Dask distributed: classes that outgrow one machine.

The batch (the client) ships the assignment's material once to every Dask
worker (a tar archive, scattered), then one task per submission. On each
Dask worker a task hands its submission to a local batch worker, the same
warm judge process (with its own sandbox server) that the process backend runs,
kept alive between tasks. Tasks take and return JSON text only: the result
is ``SubmissionResult.to_dict()`` as JSON, never a pickle of anything a
sandbox produced. Run Dask workers with one thread each (``--nthreads 1``)
and as many worker processes as cores: each thread drives one judge.

The service (``torchgrader serve``) grades one submission at a time per slot:
``DaskBackend.start`` gives it a :class:`TaskPipe`, the same interface as a
local worker's pipe, whose jobs run as tasks on the cluster.
"""

from __future__ import annotations

import io
import json
import os
import queue
import shutil
import sys
import tarfile
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from autograder.batch import material
from autograder.batch.backends import Deliver, Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.pipe import WorkerPipe
from autograder.errors import WorkerDied, WorkerFatal

# ---------------------------------------------------------------------- client side


def pack_course(config: WorkerConfig) -> bytes:
    """The grading material (no references, alternatives or mutants) as a deterministic tar.gz.

    The same material always packs to the same bytes, so Dask's content key is stable: a
    later batch finds the folder already extracted on each worker instead of adding one.
    """
    return material.pack(Path(config.course), config.assignment)


class DaskBackend:
    name = "dask"

    def __init__(self, config: WorkerConfig, scheduler: str, workers: int = 0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise WorkerFatal("--backend dask needs the `distributed` package (pip install distributed)") from None
        self.config = config
        try:
            self.client = Client(scheduler, timeout=30)
        except OSError as e:
            raise WorkerFatal(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        try:
            self.client.wait_for_workers(1, timeout=60)
        except (TimeoutError, OSError):
            self.client.close()
            raise WorkerFatal(f"the Dask scheduler at {scheduler} has no workers: start some with "
                              f"`dask worker {scheduler} --nthreads 1` (one per core)") from None
        self.workers = self.live_workers()
        # what every task of a service's slot asks of its worker ({"GPU": 1} for an assignment that asks for
        # CUDA): its judges are warmed on those workers only
        self.resources: dict[str, float] = {}

    def live_workers(self) -> int:
        """The Dask workers alive now, as the scheduler knows them."""
        try:
            return len(self.client.nthreads())
        except Exception:  # noqa: BLE001 - a scheduler gone at the end of a batch
            return 0

    def grade_jobs(self, jobs: list[Job], deliver: Deliver) -> None:
        from distributed import as_completed

        if not jobs:
            return
        cfg = self.config.elsewhere(self.config.course).to_dict()  # local paths mean nothing on another machine
        bundle = self.client.scatter(pack_course(self.config), broadcast=True, hash=True)
        futures = {}
        for job in jobs:
            f = self.client.submit(grade_task, bundle, cfg, job.payload(), pure=False, retries=1,
                                   key=f"torchgrader-{job.id}-{os.getpid()}-{id(job)}")
            futures[f] = job
        try:
            for f in as_completed(futures):
                job = futures.pop(f)
                try:
                    reply = json.loads(f.result())
                except Exception as e:  # noqa: BLE001 - a lost worker, a failed task: this job's problem
                    deliver(job, None, f"the Dask task failed: {type(e).__name__}: {e}", "dask")
                    continue
                if reply.get("fatal"):
                    raise WorkerFatal(reply["fatal"])
                if "error" in reply:
                    deliver(job, None, reply["error"], reply.get("worker", "dask"))
                else:
                    deliver(job, reply["result"], "", reply.get("worker", "dask"))
        finally:
            for f in futures:
                f.cancel()
            self.workers = self.live_workers()

    def resource_workers(self, name: str) -> int:
        """Dask workers alive now that declare the resource ``name`` (``dask worker --resources GPU=1``)."""
        try:
            workers = self.client.scheduler_info()["workers"].values()
        except Exception:  # noqa: BLE001 - a scheduler gone: none
            return 0
        return sum(1 for w in workers if (w.get("resources") or {}).get(name, 0) > 0)

    def start(self, slot: int) -> TaskPipe:
        """A pipe for the service's slot ``slot``: it starts a judge on the cluster first (WorkerFatal when none
        can start), and reports the suite version that judge grades with."""
        return TaskPipe(self, f"dask slot {slot}")

    def close(self) -> None:
        """Close the judges this batch left idle on every worker (each holds torch twice), then disconnect."""
        try:
            self.client.run(close_idle)
        except Exception:  # noqa: BLE001 - workers that are gone have no judges left
            pass
        self.client.close()


class TaskPipe:
    """One submission at a time as a Dask task, through :class:`WorkerPipe`'s interface (``info``, ``grade``,
    ``close``): what the service's slots drive. The material is packed when the pipe is made, so a pipe made
    after staff change a suite ships the new one (and its judges are new: the key is the content)."""

    def __init__(self, backend: DaskBackend, label: str) -> None:
        self.label = label
        self.client = backend.client
        self.cfg = backend.config.elsewhere(backend.config.course).to_dict()
        self.bundle = self.client.scatter(pack_course(backend.config), broadcast=True, hash=True)
        self.resources = dict(backend.resources)  # what each task asks of its worker (the service: a GPU)
        self.last_worker = ""  # the Dask worker that graded the last job
        reply = self._warm_everywhere(label)
        if reply.get("fatal"):
            raise WorkerFatal(reply["fatal"])
        if "error" in reply:
            raise WorkerDied(f"{label}: {reply['error']}")
        self.info: dict[str, Any] = {"ready": True, "suite_version": reply.get("suite_version", ""),
                                     "worker": reply.get("worker", "dask")}
        self.alive = True

    def _warm_everywhere(self, label: str) -> dict[str, Any]:
        """Start a judge on every Dask worker at once (each keeps it for the tasks that follow, so a burst or a
        job moved off a lost worker meets a warm judge); the first reply that says ready, else the first."""
        from distributed import as_completed

        try:
            workers = [w for w, info in self.client.scheduler_info()["workers"].items()
                       if all((info.get("resources") or {}).get(k, 0) >= v for k, v in self.resources.items())]
        except Exception:  # noqa: BLE001 - a scheduler gone: the one task below says so
            workers = []
        if len(workers) < 2:
            return self._call(warm_task, READY_SECONDS, "while starting a judge", self.bundle, self.cfg,
                              resources=self.resources)
        futures = [self.client.submit(warm_task, self.bundle, self.cfg, pure=False, workers=[w],
                                      allow_other_workers=False, key=f"torchgrader-warm-{uuid.uuid4().hex}")
                   for w in workers]
        first: dict[str, Any] = {}
        try:
            for f in as_completed(futures, timeout=READY_SECONDS):
                try:
                    reply = json.loads(f.result())
                except Exception as e:  # noqa: BLE001 - a worker lost while starting: another may answer
                    reply = {"error": f"the Dask task failed while starting a judge: {type(e).__name__}: {e}"}
                first = first or reply
                if reply.get("ready"):
                    return reply
        except TimeoutError:
            pass
        return first or {"error": f"no Dask worker started a judge in {READY_SECONDS:.0f} s"}

    def _call(self, fn: Any, timeout: float, what: str, *args: Any,
              resources: dict[str, float] | None = None) -> dict[str, Any]:
        future = self.client.submit(fn, *args, pure=False, key=f"torchgrader-{uuid.uuid4().hex}",
                                    resources=resources or None)
        try:
            return json.loads(future.result(timeout=timeout))
        except Exception as e:  # noqa: BLE001 - a lost worker, a timeout, a failed task: this job's problem
            future.cancel()
            raise WorkerDied(f"{self.label}: the Dask task failed {what}: {type(e).__name__}: {e}") from None

    def grade(self, job: Any, timeout: float) -> dict[str, Any]:
        """The result dict of one job; raises WorkerDied (tried again by the caller) or WorkerFatal."""
        reply = self._call(grade_task, timeout, f"while grading {job.name}", self.bundle, self.cfg, job.payload(),
                           resources=self.resources)
        if reply.get("fatal"):
            raise WorkerFatal(reply["fatal"])
        self.last_worker = str(reply.get("worker", ""))
        if "error" in reply:
            raise WorkerDied(f"{self.label}: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        self.alive = False

    def kill(self) -> None:
        self.alive = False

    def finish(self) -> None:
        self.alive = False


READY_SECONDS = 240.0  # a judge's start on a Dask worker: importing torch twice, on a loaded machine


# ---------------------------------------------------------------------- worker side
_lock = threading.Lock()
_courses: dict[str, Path] = {}
_idle: dict[str, list[WorkerPipe]] = {}


def _course(bundle: bytes) -> Path:
    import hashlib

    key = hashlib.sha256(bundle).hexdigest()[:16]
    with _lock:
        if key not in _courses:
            # One folder per version of the material, shared by this machine's Dask workers: extracted
            # aside, then renamed into place, so a reader never sees half of it.
            dest = Path(tempfile.gettempdir()) / f"torchgrader-course-{key}-{os.getuid()}"
            if not _ours(dest):
                part = Path(tempfile.mkdtemp(prefix=f"torchgrader-course-{key}-part-"))
                with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as tar:
                    tar.extractall(part, filter="data")
                try:
                    os.rename(part, dest)
                except OSError:  # another worker won the race, or someone else's folder is in the way
                    if _ours(dest):
                        shutil.rmtree(part, ignore_errors=True)
                    else:
                        dest = part
            _courses[key] = dest
        return _courses[key]


def _ours(path: Path) -> bool:
    """A real folder of this user, private: safe to trust in a shared /tmp."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _take(cfg: WorkerConfig) -> WorkerPipe:
    key = cfg.to_json()
    with _lock:
        pool = _idle.setdefault(key, [])
        while pool:
            pipe = pool.pop()
            if pipe.alive:
                return pipe
    import autograder

    env = dict(os.environ)
    root = str(Path(autograder.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    argv = [sys.executable, "-m", "autograder.batch.backends.worker", key]
    return _in_keeper_thread(lambda: WorkerPipe(argv, f"dask worker {os.getpid()}", None, env=env))


_keeper_jobs: queue.Queue = queue.Queue()
_keeper: threading.Thread | None = None


def _in_keeper_thread(fn: Any) -> Any:
    """Run ``fn`` on one thread that lives as long as this process.

    A worker dies with the thread that started it (PR_SET_PDEATHSIG); Dask's
    task threads may come and go, this one does not.
    """
    global _keeper
    with _lock:
        if _keeper is None:
            def loop() -> None:
                while True:
                    f, box, done = _keeper_jobs.get()
                    try:
                        box.append((True, f()))
                    except BaseException as e:  # noqa: BLE001 - handed back to the caller
                        box.append((False, e))
                    done.set()

            _keeper = threading.Thread(target=loop, daemon=True, name="torchgrader-keeper")
            _keeper.start()
    box: list = []
    done = threading.Event()
    _keeper_jobs.put((fn, box, done))
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return value


def close_idle() -> int:
    """Runs on each Dask worker when a batch ends: close its idle judges; returns how many."""
    with _lock:
        pipes = [p for pool in _idle.values() for p in pool]
        _idle.clear()
    for p in pipes:
        try:
            p.close()
        except Exception:  # noqa: BLE001 - best effort: a judge that is already gone
            pass
    return len(pipes)


def live_judges() -> int:
    """Judge processes this Dask worker process has started that are still running (for tests)."""
    me = os.getpid()
    n = 0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == me and b"autograder.batch.backends.worker" in (d / "cmdline").read_bytes():
                n += 1
        except (OSError, ValueError, IndexError):
            pass
    return n


def _give_back(cfg: WorkerConfig, pipe: WorkerPipe) -> None:
    with _lock:
        _idle.setdefault(cfg.to_json(), []).append(pipe)


def warm_task(bundle: bytes, cfg_dict: dict[str, Any]) -> str:
    """Runs on a Dask worker: start (or find) a warm judge for this material; its suite version as JSON."""
    cfg = WorkerConfig.from_dict(cfg_dict).elsewhere(str(_course(bundle)))
    label = f"dask {os.uname().nodename}:{os.getpid()}"
    try:
        pipe = _take(cfg)
    except WorkerFatal as e:
        return json.dumps({"fatal": str(e)})
    except WorkerDied as e:
        return json.dumps({"error": str(e), "worker": label})
    _give_back(cfg, pipe)
    return json.dumps({"ready": True, "suite_version": pipe.info.get("suite_version", ""), "worker": label})


def grade_task(bundle: bytes, cfg_dict: dict[str, Any], job_payload: dict[str, Any]) -> str:
    """Runs on a Dask worker: grade one submission with a warm local worker; returns JSON text."""
    cfg = WorkerConfig.from_dict(cfg_dict).elsewhere(str(_course(bundle)))
    label = f"dask {os.uname().nodename}:{os.getpid()}"
    job = _PayloadJob(job_payload)
    for attempt in range(2):
        try:
            pipe = _take(cfg)
            result = pipe.grade(job, cfg.job_seconds())
        except WorkerFatal as e:
            return json.dumps({"fatal": str(e)})
        except WorkerDied as e:
            if attempt == 1:
                return json.dumps({"error": str(e), "worker": label})
            continue
        _give_back(cfg, pipe)
        return json.dumps({"result": result, "worker": label})
    raise AssertionError("unreachable")  # pragma: no cover


class _PayloadJob:
    """A job that already carries its bytes (it came over the network)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.id = payload["id"]
        self.name = payload["name"]
        self._payload = payload

    def payload(self) -> dict[str, Any]:
        return self._payload
