"""The grading pool: warm batch workers (``batch/backends/``) fed one job at a time from the store's queue.

Each slot is a thread that owns one worker (``Backend.start``: the same warm
judge process that ``torchgrader grade`` runs; on the process backend the slot's
backend owns the worker's sandbox server, which a restarted worker reuses)
and keeps it between submissions. A slot claims the oldest queued job of its
assignment, sends the submission's bytes to its worker and stores the result
in the same transaction that marks the job done. The worker is started on
the slot's own thread because it dies with that thread (``PR_SET_PDEATHSIG``):
when the service is killed, so are its workers, and their jobs are picked up
again at the next start (``ServiceStore.requeue_interrupted``).

Fair order, priority and the watchdog: slots claim in the store's fair order
(students before regrades, everyone's first before anyone's second); each slot's
thread runs at the config's ``nice`` value, which the worker, its sandbox server
and every sandbox inherit, so the web tier answers at once while the graders
saturate the cores; and a job that runs past its assignment's limit (the sum of
its exercises' timeouts plus ``watchdog_margin``) has its worker stopped, is tried
once more on a fresh worker, then stored as a grader failure for staff.

GPU routing: an assignment with an exercise that asks for CUDA (``gpu = true``)
is taken only by a slot whose worker declares a GPU (``devices``; on Dask, a task
that needs the ``gpu_resource``). With none, it waits (the dashboard says why),
or, where its policy's ``cpu_fallback`` allows, is graded on CPU and the student
is told so.

Before each job the slot checks the assignment's suite version: after staff
fix a suite, a regrade is graded by a worker started on the new material
(with a fresh backend: a container's material is staged when it is made).

The backends are the batch's: ``process`` (the default), ``docker`` and
``podman`` (one container per slot, ``--network none``; the image is checked
before the first one starts) and ``dask`` (each slot sends one submission at a
time to the cluster, whose workers keep their judges warm:
``DaskBackend.start``).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.assignment import Assignment, find_course, load_assignment
from autograder.batch.backends import DEFAULT_GPUS, Job, Where, make_backend
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.pipe import WorkerPipe
from autograder.batch.inputs import Entry
from autograder.batch.runner import grader_failure
from autograder.batch.store import suite_version
from autograder.errors import AssignmentError, WorkerDied, WorkerFatal
from autograder.options import Budget, GradeOptions
from autograder.results import SubmissionResult
from autograder.sandbox.isolation import Limits
from autograder.service.blobs import Blobs
from autograder.service.config import ServiceConfig
from autograder.service.store import JobRow, ServiceStore, Submission, disk_full

RESTART_PAUSE = 5.0  # seconds between attempts to start a worker that would not start
MIN_FREE_BYTES = 1 << 20  # below this much free space on the data folder's disk, /healthz says it is full
SERVICE_BACKENDS = ("process", "docker", "podman", "dask")  # those that keep a worker warm per slot


@dataclass
class SlotState:
    label: str
    assignment: str
    state: str = "starting"  # starting | ready | grading | down
    detail: str = ""
    graded: int = 0
    seconds: list[float] = field(default_factory=list)  # the last grading times (for Retry-After)
    lent: bool = False  # its share of the machine is lent to another slot's submission (judge/spread.py)
    claimed: int | None = None  # the job it has claimed and not yet settled (a failed slot puts it back)
    device: str = "cpu"  # what its worker declares: "cpu", "cuda:N", or "dask" (the cluster's resources decide)
    job: int | None = None  # the job it grades now
    since: float = 0.0  # when it took that job (time.time())
    limit: float = 0.0  # seconds the watchdog gives that job
    pid: int | None = None  # its worker's process (local and container workers)
    restarts: int = 0  # workers started after the first (a death, a watchdog stop, new material)

    def stuck(self, now: float | None = None) -> bool:
        """Grading one job for longer than the watchdog allows (its worker is about to be stopped)."""
        return self.job is not None and (now or time.time()) - self.since > self.limit


class GradingPool:
    """``workers`` warm worker slots per assignment of the config."""

    def __init__(self, cfg: ServiceConfig, store: ServiceStore, blobs: Blobs, log_dir: Path) -> None:
        self.cfg = cfg
        self.store = store
        self.blobs = blobs
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.course = Path(cfg.course) if cfg.course else find_course()
        self.stop_event = threading.Event()
        self._wake = threading.Condition()
        self.slots: list[SlotState] = []
        self._threads: list[threading.Thread] = []
        self.assignments: dict[str, Assignment] = {}
        self._said: dict[str, float] = {}  # log_once: when each line was last printed
        self._cluster_gpus = 0  # Dask workers that declare the GPU resource (checked by each dask slot)

    # ------------------------------------------------------------------ set-up
    def load(self) -> None:
        """Load every configured assignment (raises AssignmentError naming what is wrong); imports no torch."""
        for p in self.cfg.assignments:
            self.assignments[p.id] = load_assignment(p.id, self.course)

    def worker_config(self, assignment: str) -> WorkerConfig:
        c = self.cfg
        options = GradeOptions(limits=Limits(memory_bytes=int(c.memory_gb * 2**30)),
                               budget=Budget(cell_seconds=c.cell_timeout, submission_seconds=c.submission_timeout),
                               protected=[self.blobs.root.parent.resolve()])
        return WorkerConfig(course=str(self.course), assignment=assignment, options=options,
                            allow_unisolated=c.allow_unisolated)

    def backend(self, assignment: str, device: str = "cpu") -> Any:
        gpus = "none" if device == "cpu" else f"device={device.split(':')[1]}"
        return make_backend(self.cfg.backend, Where(self.worker_config(assignment), self.cfg.workers,
                                                    self.log_dir, docker_image=self.cfg.docker_image,
                                                    docker_gpus=gpus if self.cfg.devices else DEFAULT_GPUS,
                                                    scheduler=self.cfg.scheduler or None,
                                                    warm_up=True,  # a slot's worker grades submission after submission
                                                    device=device if self.cfg.devices else ""))

    # ------------------------------------------------------------------ the watchdog and GPU routing
    def limit(self, assignment: str) -> float:
        """Seconds one job of ``assignment`` may run: the sum of its exercises' timeouts plus the margin."""
        a = self.assignments.get(assignment)
        return sum(e.timeout for e in a.exercises) + self.cfg.watchdog_margin if a else self.cfg.watchdog_margin

    def gpu_exercises(self, assignment: str) -> list[str]:
        """The exercises of ``assignment`` that ask for CUDA (exercise.toml ``gpu = true``)."""
        a = self.assignments.get(assignment)
        return [e.id for e in a.exercises if e.gpu] if a else []

    def _gpu_slots(self, assignment: str) -> list[SlotState]:
        return [s for s in self.slots if s.assignment == assignment and s.device.startswith("cuda")
                and s.state != "down"]

    def route(self, st: SlotState) -> tuple[bool, str]:
        """Whether slot ``st`` may take its assignment's jobs now, and the note its student is then given.

        Jobs that ask for CUDA go to a slot that declares a GPU; a CPU slot takes them only where no GPU slot
        runs and the policy allows the CPU fallback. On Dask the slot always may: its task asks the cluster
        for the GPU resource (``dask_resources``), or takes the fallback, or is not sent (``blocked``).
        """
        gpu = self.gpu_exercises(st.assignment)
        if not gpu or st.device.startswith("cuda"):
            return True, ""
        if st.device == "dask":
            resources = self.dask_resources(st.assignment)
            if resources is None:
                return False, ""
            return True, "" if resources else _fallback_note(gpu)
        policy = self.cfg.policy(st.assignment)
        if self._gpu_slots(st.assignment) or not (policy and policy.cpu_fallback):
            return False, ""
        return True, _fallback_note(gpu)

    def dask_resources(self, assignment: str) -> dict[str, float] | None:
        """The resources a Dask task of ``assignment`` asks for: the GPU resource where it asks for CUDA and a
        worker declares one; {} for any worker; None when it must wait (no GPU worker, no CPU fallback)."""
        if not self.gpu_exercises(assignment):
            return {}
        if self._cluster_gpus > 0:
            return {self.cfg.gpu_resource: 1}
        policy = self.cfg.policy(assignment)
        return {} if policy and policy.cpu_fallback else None

    def blocked(self, assignment: str) -> str:
        """Why ``assignment``'s jobs wait with no worker to take them ("" when some worker may)."""
        mine = [s for s in self.slots if s.assignment == assignment]
        if not mine or any(self.route(s)[0] for s in mine):
            return ""
        where = (f"no Dask worker declares the resource {self.cfg.gpu_resource} (dask worker --resources "
                 f"{self.cfg.gpu_resource}=1)" if self.cfg.backend == "dask"
                 else "no worker declares a GPU ([grading] devices = [\"cuda:0\", ...])")
        return (f"{assignment} asks for CUDA ({', '.join(self.gpu_exercises(assignment))}) and {where}; its "
                "submissions wait for one (or set cpu_fallback = true for it to grade them on CPU)")

    def start(self) -> None:
        if not self.assignments:
            self.load()
        requeued = self.store.requeue_interrupted()
        if requeued:
            print(f"torchgrader serve: {requeued} submission(s) cut off by the last stop are queued again",
                  flush=True)
        if self.cfg.backend not in SERVICE_BACKENDS:
            raise WorkerFatal(f"backend {self.cfg.backend!r} cannot keep warm workers for the service: "
                              f"use one of {', '.join(SERVICE_BACKENDS)}")
        for aid in self.assignments:
            for i in range(self.cfg.workers):
                device = "dask" if self.cfg.backend == "dask" else self.cfg.device(i)
                st = SlotState(label=f"{aid} worker {i}", assignment=aid, device=device)
                self.slots.append(st)
                t = threading.Thread(target=self._slot, args=(st, i), daemon=True, name=f"tg-service-{aid}-{i}")
                self._threads.append(t)
                t.start()

    def wake(self) -> None:
        with self._wake:
            self._wake.notify_all()

    def stop(self, wait: float = 15.0) -> None:
        self.stop_event.set()
        self.wake()
        deadline = time.monotonic() + wait
        for t in self._threads:
            t.join(max(0.1, deadline - time.monotonic()))

    # ------------------------------------------------------------------ what the web tier asks
    def health(self) -> tuple[bool, str]:
        """Ready when every assignment has a worker whose sandbox started; else why not."""
        why = []
        free = self.free_bytes()
        if free is not None and free < MIN_FREE_BYTES:
            why.append(f"the data folder's disk is full ({free // 1024} KB free): uploads are refused and grading "
                       f"is paused until space is freed")
        for st, t in zip(self.slots, self._threads, strict=True):
            if not t.is_alive() and not self.stop_event.is_set():
                why.append(f"{st.label}: its thread has stopped")
        for aid in self.assignments:
            mine = [s for s in self.slots if s.assignment == aid]
            if not any(s.state in ("ready", "grading") for s in mine):
                detail = next((s.detail for s in mine if s.detail), "")
                why.append(f"{aid}: the workers' sandboxes are starting" if not detail else f"{aid}: {detail}")
            why += [f"{s.label}: {s.detail}" for s in mine if s.state == "down" and s.detail and
                    any(o.state in ("ready", "grading") for o in mine)]
        return (not why, "; ".join(why) or "ready")

    def free_bytes(self) -> int | None:
        """Free bytes on the data folder's disk (None when it cannot be asked)."""
        try:
            return shutil.disk_usage(self.blobs.root).free
        except OSError:
            return None

    def seconds_per_job(self) -> float:
        times = [t for s in self.slots for t in s.seconds]
        return sum(times) / len(times) if times else 30.0

    def retry_after(self, waiting: int) -> int:
        """A fair guess at when the queue will have room again."""
        per_slot = max(1, len(self.slots))
        return max(5, int(self.seconds_per_job() * max(1, waiting) / per_slot / 4))

    def estimated_wait(self, assignment: str, position: int) -> float:
        """Seconds until a job at ``position`` of ``assignment``'s queue is graded, at the recent pace."""
        if position <= 0:
            return 0.0
        slots = max(1, sum(1 for s in self.slots if s.assignment == assignment and s.state != "down"))
        return self.seconds_per_job() * (1 + (position - 1) // slots)

    # ------------------------------------------------------------------ one slot
    def _slot(self, st: SlotState, index: int) -> None:
        """The slot's thread: its loop, run again after any error, so that a slot never dies in silence.

        An unexpected error (a full disk when the result is stored, a bug) closes the worker, puts the job
        back (a full disk: no try counted) or counts a try against it (anything else: a second one finishes
        it for staff), marks the slot ``down`` with the reason (``/healthz`` says it) and starts it again.
        """
        while not self.stop_event.is_set():
            try:
                self._run_slot(st, index)
            except Exception as e:  # noqa: BLE001 - whatever it was, the slot must go on and the job be settled
                self._slot_failed(st, e)

    def _slot_failed(self, st: SlotState, e: Exception) -> None:
        full = disk_full(e)
        why = (f"the data folder's disk is full ({e}): grading is paused until space is freed" if full else
               f"the grading thread failed ({type(e).__name__}: {e}); it is started again")
        st.state, st.detail = "down", why[-600:]
        self.log_once(f"torchgrader serve: {st.label}: {why}")
        st.job = None
        while st.claimed is not None and not self.stop_event.is_set():  # settle the job: never left `running`
            try:
                job = self.store.job(st.claimed)
                if job is not None and job.state == "running":
                    if full:
                        self.store.release(job.id)
                    elif not self.store.worker_died(job.id, why):
                        sub = self.store.submission(job.submission)
                        assert sub is not None
                        assignment = load_assignment(st.assignment, self.course)
                        self._for_staff(job, assignment, suite_version(assignment), sub, why)
                st.claimed = None
            except Exception as again:  # noqa: BLE001 - the store cannot take it yet (still full): wait, try again
                st.detail = (f"the data folder's disk is full ({again}): grading is paused until space is freed"
                             if disk_full(again) else f"a job cannot be put back yet ({again})")[-600:]
                self.stop_event.wait(RESTART_PAUSE)
        self.stop_event.wait(RESTART_PAUSE)

    def log_once(self, line: str) -> None:
        """Print ``line`` unless the same line was printed in the last minute (a loop of failures is one line)."""
        now = time.monotonic()
        if now - self._said.get(line, -1e9) >= 60:
            self._said[line] = now
            print(line, flush=True)

    def _run_slot(self, st: SlotState, index: int) -> None:
        backend: Any = None
        pipe: WorkerPipe | None = None
        lower_priority(self.cfg.nice)  # this thread's: the worker, its sandbox server and sandboxes inherit it
        try:
            while not self.stop_event.is_set():
                if backend is None:
                    backend = self._open_backend(st)
                    if backend is None:
                        continue
                if pipe is None:
                    pipe = self._start_worker(backend, st, index)
                    if pipe is None:
                        continue
                job = self._claim(st)
                if job is None:
                    with self._wake:
                        self._wake.wait(0.5)
                    continue
                st.claimed = job.id
                backend, pipe = self._grade(pipe, backend, st, index, job)
                st.job = st.claimed = None
                if st.state == "grading":  # a job finished without a worker's grade (for staff): free again
                    st.state = "ready"
        finally:
            if pipe is not None:
                pipe.close()
            _close(backend)

    def _claim(self, st: SlotState) -> JobRow | None:
        """The next job for this slot, unless its share of the machine is lent or its assignment's jobs need a
        GPU it has not (then it waits: None)."""
        with self._wake:
            if st.lent:
                return None
            ok, note = self.route(st)
            if not ok:
                return None
            worker = st.label + (f" ({st.device}, pid {st.pid})" if st.pid else f" ({st.device})")
            job = self.store.claim(st.assignment, worker, note)
            if job is not None:
                st.state = "grading"  # under the lock: a slot borrowing a share never takes this one's
                st.job, st.since, st.limit = job.id, time.time(), self.limit(st.assignment)
            return job

    def _borrow(self, st: SlotState, backend: Any) -> SlotState | None:
        """Another slot's share of the machine for ``st``'s submission, while that slot and the queue are idle.

        The submission is then shared with a copy of the judge (judge/spread.py): a student waiting on an
        idle service gets their grade about twice as fast. The lender claims nothing until it is given
        back, so the service never runs more judges, nor holds more sandboxes' memory, than its slots.
        Local workers only: a container's or a cluster's resources are not this machine's to lend.
        """
        if not getattr(backend, "shares_server", False):
            return None
        with self._wake:
            if self.store.queued():  # another job waits: the idle slot is about to take it
                return None
            for other in self.slots:
                if other is not st and other.state == "ready" and not other.lent:
                    other.lent = True
                    return other
        return None

    def _give_back(self, lender: SlotState | None) -> None:
        if lender is not None:
            with self._wake:
                lender.lent = False
                self._wake.notify_all()

    def _open_backend(self, st: SlotState) -> Any:
        """This slot's backend (a Dask client, a staged copy of the material for containers), or None."""
        st.state = "starting"
        try:
            backend = self.backend(st.assignment, st.device if st.device != "dask" else "cpu")
        except WorkerFatal as e:
            st.state, st.detail = "down", str(e.message)[-600:]
            self.stop_event.wait(RESTART_PAUSE)
            return None
        gpus = getattr(backend, "resource_workers", None)  # Dask: are there workers declaring a GPU?
        if gpus is not None:
            self._cluster_gpus = gpus(self.cfg.gpu_resource)
            backend.resources = self.dask_resources(st.assignment) or {}  # its tasks ask for a GPU, or not
        return backend

    def _start_worker(self, backend: Any, st: SlotState, index: int) -> WorkerPipe | None:
        st.state = "starting"
        try:
            ensure_image = getattr(backend, "ensure_image", None)  # containers: the image of this grader's code
            if ensure_image is not None:
                ensure_image()
            pipe: WorkerPipe = backend.start(index)
        except (WorkerDied, WorkerFatal) as e:
            st.state, st.detail = "down", str(e.message)[-600:]
            self.stop_event.wait(RESTART_PAUSE)
            return None
        if st.pid is not None or st.graded:
            st.restarts += 1
        st.state, st.detail, st.pid = "ready", "", pipe.info.get("pid")
        return pipe

    def _grade(self, pipe: WorkerPipe, backend: Any, st: SlotState, index: int,
               job: JobRow) -> tuple[Any, WorkerPipe | None]:
        """Grade one claimed job; returns the backend and the worker to keep (None when gone)."""
        sub = self.store.submission(job.submission)
        assert sub is not None
        try:
            assignment = load_assignment(st.assignment, self.course)
            version = suite_version(assignment)
        except AssignmentError as e:
            self.store.release(job.id)
            st.state, st.detail = "down", f"the assignment's material cannot be loaded: {e.message}"
            self.stop_event.wait(RESTART_PAUSE)
            return backend, pipe
        damaged = self.blobs.damaged(sub.sha256)
        if damaged is not None:  # never a grade of other bytes than the student's: staff look at it
            self._for_staff(job, assignment, version, sub, damaged)
            return backend, pipe
        if pipe.info.get("suite_version") != version:  # staff changed the suites: a worker on the new material
            pipe.close()
            _close(backend)
            backend = self._open_backend(st)
            fresh = self._start_worker(backend, st, index) if backend is not None else None
            if fresh is None:
                self.store.release(job.id)
                return backend, None
            pipe = fresh
        options = {"public": True} if job.suites == "public" else None
        payload = Job(id=str(job.id), name=f"submission.{sub.kind}", path=self.blobs.path(sub.sha256),
                      options=options)
        st.state = "grading"
        started = time.monotonic()
        lender = self._borrow(st, backend)
        payload.spread = 2 if lender is not None else 1
        limit = self.limit(st.assignment)
        try:
            result = pipe.grade(payload, limit)
        except WorkerDied as e:
            st.state, st.job = "starting", None
            why = e.message
            if time.monotonic() - started >= limit - 1:
                why = (f"the watchdog stopped {st.label} (pid {st.pid}): job {job.id} ran past its assignment's "
                       f"limit of {limit:.0f} s (its exercises' timeouts plus {self.cfg.watchdog_margin:.0f} s); "
                       + ("it is tried once more on a fresh worker" if job.tries == 0 else
                          "it stopped a fresh worker too: kept for staff, not counted against the student"))
            if not self.store.worker_died(job.id, why):
                self._for_staff(job, assignment, version, sub, why)
            return backend, None
        except WorkerFatal as e:
            self.store.release(job.id)
            st.state, st.detail, st.job = "down", e.message[-600:], None
            self.stop_event.wait(RESTART_PAUSE)
            return backend, None
        finally:
            self._give_back(lender)
        r = SubmissionResult.from_dict(result)
        r.student, r.sha256, r.path = sub.person, sub.sha256, sub.filename
        where = getattr(pipe, "last_worker", "")  # Dask: the cluster's worker that graded it
        self.store.finish(job.id, r.to_dict(), version, worker=f"{st.label} on {where}" if where else "")
        st.graded += 1
        st.job = None
        st.seconds = [*st.seconds[-19:], time.monotonic() - started]
        st.state = "ready"
        return backend, pipe


    def _for_staff(self, job: JobRow, assignment: Assignment, version: str, sub: Submission, why: str) -> None:
        """Finish ``job`` ungraded, marked for staff: zero points, "not a judgement of your work", and why."""
        entry = Entry(path=self.blobs.path(sub.sha256), source=sub.filename, submission="submission",
                      student=sub.person, sha256=sub.sha256, order=())
        failed = grader_failure(assignment, entry, why)
        self.store.finish(job.id, failed.to_dict(), version, needs_ta=True, error=why[-2000:])
        for st in self.slots:
            if st.job == job.id:
                st.job = None


def lower_priority(nice: int) -> None:
    """Lower the calling thread's CPU priority by ``nice`` steps below the service's own (Linux: per thread;
    what it starts inherits it). The graders then yield the cores to the web tier: a status call answers at
    once while every core grades. Relative, so a service started under ``nice`` keeps its workers below it."""
    if nice <= 0:
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + nice))
    except OSError:
        pass


def _fallback_note(exercises: list[str]) -> str:
    return (f"Graded on CPU: {', '.join(exercises)} ask{'s' if len(exercises) == 1 else ''} for a GPU, and none was "
            "running; the course allows these exercises' CPU fallback, so they ran on CPU (same tests, same points).")


def _close(backend: Any) -> None:
    """Let a backend go: its staged material, its Dask client and the judges it left idle on the cluster."""
    close = getattr(backend, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception:  # noqa: BLE001 - best effort: a scheduler that is gone, a folder already removed
        pass
