"""Local worker processes: warm judges sharing one sandbox server (the default backend).

The backend starts the server before the first worker and hands each worker its own
connection to it (a worker started again after a death gets a new one). One server for
all the workers imports torch and warms the compiler up once, not once per worker, and
holds one copy of torch's memory instead of one per worker. It never runs student code:
each sandbox is still forked from it for one submission, and killed with its worker.
"""

from __future__ import annotations

import os
import queue
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.batch.backends import Deliver, Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.pipe import WorkerPipe
from autograder.errors import AssignmentError, ServerFailed, WorkerDied, WorkerFatal
from autograder.sandbox.client import SERVER_FD_ENV, SandboxServer

MAX_START_FAILURES = 3  # in a row, per worker slot, before the batch gives up
_DONE = object()


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # removed under us: the worker's paths are absolute (WorkerConfig)
        return "/"


@dataclass
class _Pool:
    """What the slot threads of one grade_jobs call share: jobs to take, results (and _DONE) to hand back."""

    timeout: float  # seconds the parent waits for one job (WorkerConfig.job_seconds)
    todo: queue.Queue[Job] = field(default_factory=queue.Queue)
    done: queue.Queue[Any] = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)
    fatal: list[str] = field(default_factory=list)


class ProcessBackend:
    """``workers`` local worker processes fed from one queue; results come back on the caller's thread."""

    name = "process"
    shares_server = True  # workers on this host share one sandbox server (a container's worker has its own)

    def __init__(self, config: WorkerConfig, workers: int, log_dir: Path | None = None, *,
                 warm_up: bool = False, device: str = "") -> None:
        self.config = config
        self.workers = max(1, workers)
        self.log_dir = log_dir
        self._pipes: dict[int, WorkerPipe] = {}
        self._finishing: list[WorkerPipe] = []  # told to stop, not yet waited for (see close)
        self._lock = threading.Lock()
        self._server: SandboxServer | None = None
        # The workers will grade more than one submission each (a service's, or a batch with more jobs than
        # workers): the shared server warms up at once, between their requests, not at a second submission.
        self.warm_up = warm_up
        # A service's slot declares its worker's one device: "cpu" hides every GPU from the worker, its sandbox
        # server and sandboxes; "cuda:N" shows GPU N only (CUDA_VISIBLE_DEVICES). "": the host's devices as they are.
        self.device = device

    # ------------------------------------------------------------------ one worker
    def argv(self, slot: int) -> list[str]:
        return [sys.executable, "-m", "autograder.batch.backends.worker", self.config.to_json()]

    def env(self) -> dict[str, str] | None:
        import autograder

        env = dict(os.environ)
        root = str(Path(autograder.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
        env.setdefault("OMP_NUM_THREADS", "1")
        env.update(self.device_env())
        return env

    def device_env(self) -> dict[str, str]:
        """CUDA_VISIBLE_DEVICES for this backend's declared device ({} where none is declared)."""
        if not self.device:
            return {}
        return {"CUDA_VISIBLE_DEVICES": "" if self.device == "cpu" else self.device.split(":", 1)[1]}

    def kill_command(self, slot: int) -> list[str] | None:
        return None

    def explain_exit(self, code: int) -> str:
        """What an exit code of the worker's command means, when it means more than "the worker died"."""
        return ""

    def start(self, slot: int) -> WorkerPipe:
        log = self.log_dir / f"worker-{slot}.log" if self.log_dir else None
        env = self.env()
        if self.warm_up and self.shares_server:  # a worker that will grade several: forked from the warm server
            forked = self._fork(slot, log, env if env is not None else dict(os.environ))
            if forked is not None:
                with self._lock:
                    self._pipes[slot] = forked
                return forked
        judge = self._connect_judge()
        try:
            if judge is not None:
                env = {**(env if env is not None else os.environ), SERVER_FD_ENV: str(judge.fileno())}
            pipe = WorkerPipe(self.argv(slot), f"worker {slot}", log, env=env, on_kill=self.kill_command(slot),
                              explain=self.explain_exit, pass_fds=(judge.fileno(),) if judge is not None else ())
        finally:
            if judge is not None:
                judge.close()  # the worker holds it now
        with self._lock:
            self._pipes[slot] = pipe
        return pipe

    def _fork(self, slot: int, log: Path | None, env: dict[str, str]) -> WorkerPipe | None:
        """A worker forked by the shared server once it has imported torch (sandbox/zygote.py): one import of
        torch for the server and every worker. None where it cannot be (the server could not start or fork);
        the worker is then started as a process of its own, as a lone submission's always is."""
        from autograder.sandbox import zygote

        with self._lock:
            server = self._shared_server()
            if server is None:
                return None
            try:
                err = os.open(log or os.devnull, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError:
                return None  # the worker started on its own meets the same, and says so
            stdin_r, stdin_w = os.pipe()
            stdout_r, stdout_w = os.pipe()
            status_r, status_w = os.pipe()
            ends = [stdin_w, stdout_r, status_r]
            try:
                _, _, module, *args = self.argv(slot)  # python -m MODULE ARGS
                server.fork_worker(module, args, {**env, SERVER_FD_ENV: str(zygote.CONNECTION_FD)}, _cwd(),
                                   [stdin_r, stdout_w, err, status_w], warm_up=self.warm_up)
            except ServerFailed:
                for fd in ends:
                    os.close(fd)
                return None
            finally:
                for fd in (stdin_r, stdout_w, err, status_w):
                    os.close(fd)
        pid, read = zygote.read_pid(status_r)
        if pid is None:
            for fd in ends:
                os.close(fd)
            return None
        proc = zygote.ForkedWorker(os.fdopen(stdin_w, "wb"), os.fdopen(stdout_r, "rb"), status_r, pid, read)
        return WorkerPipe.of(proc, f"worker {slot}", log, explain=self.explain_exit)

    def _shared_server(self) -> SandboxServer | None:
        """The shared sandbox server (the one the command started first, sandbox/prestart.py, or one started on
        first use, and again if it has exited), under ``_lock``; None where it cannot start (an unloadable
        assignment: the worker says what is wrong with it)."""
        if self._server is not None and self._server.proc is not None and self._server.proc.poll() is not None:
            self._server.close()
            self._server = None
        if self._server is None:
            from autograder.assignment import load_assignment
            from autograder.sandbox import prestart
            from autograder.warmup import start_server

            options = self.config.options
            try:
                assignment = load_assignment(self.config.assignment, Path(self.config.course),
                                             only=options.exercises)
                self._server = start_server(assignment, options, None if self.device else prestart.take(),
                                            env=self.device_env())
            except (AssignmentError, OSError):
                return None
        return self._server

    def _connect_judge(self) -> socket.socket | None:
        """A connection to the shared sandbox server for one worker (the server started on first use, and
        again if it has exited); None where workers start their own (containers, an unloadable assignment:
        the worker says what is wrong with it)."""
        if not self.shares_server:
            return None
        with self._lock:
            server = self._shared_server()
            if server is None:
                return None
            try:
                return server.connect_judge(warm_up=self.warm_up)
            except ServerFailed:
                return None  # this worker starts its own; the next start replaces the shared one

    # ------------------------------------------------------------------ the pool
    def grade_jobs(self, jobs: list[Job], deliver: Deliver) -> None:
        pool = _Pool(self.config.job_seconds())
        self.warm_up = self.warm_up or len(jobs) > self.workers
        # Fewer submissions than workers (one notebook from cold): each worker left idle lends its share of the
        # machine to one submission, which a copy of its judge then shares (judge/spread.py).
        if self.shares_server and not self.warm_up:
            for job in jobs[: max(0, self.workers - len(jobs))]:
                job.spread = 2
        for j in jobs:
            pool.todo.put(j)
        threads = [threading.Thread(target=self._slot, args=(i, pool), daemon=True, name=f"tg-slot-{i}")
                   for i in range(min(self.workers, len(jobs)))]
        # Worker processes die with the thread that started them (PR_SET_PDEATHSIG): these
        # threads live as long as their workers.
        for t in threads:
            t.start()
        running = len(threads)
        try:
            while running:
                try:
                    item = pool.done.get(timeout=0.5)
                except queue.Empty:
                    continue
                if item is _DONE:
                    running -= 1
                    continue
                if not pool.stop.is_set():
                    deliver(*item)
        except BaseException:
            pool.stop.set()
            self.kill_all()
            raise
        if pool.fatal:
            raise WorkerFatal(pool.fatal[0])

    def _slot(self, slot: int, pool: _Pool) -> None:
        """One worker slot's thread: take jobs until none is left, (re)starting its worker as needed."""
        pipe: WorkerPipe | None = None
        failures = 0
        try:
            while not pool.stop.is_set():
                try:
                    job = pool.todo.get_nowait()
                except queue.Empty:
                    return
                while not pool.stop.is_set():
                    if pipe is None:
                        try:
                            pipe = self.start(slot)
                            failures = 0
                        except WorkerDied as e:
                            failures += 1
                            if failures >= MAX_START_FAILURES:
                                raise WorkerFatal(f"a worker could not be started: {e}") from None
                            continue
                    try:
                        pool.done.put((job, pipe.grade(job, pool.timeout), "", pipe.label))
                        break
                    except WorkerDied as e:
                        pipe = None
                        job.attempts += 1
                        if job.attempts >= 2:  # twice on fresh workers: this submission breaks the grader
                            pool.done.put((job, None, str(e), f"worker {slot}"))
                            break
        except WorkerFatal as e:
            pool.fatal.append(str(e))
            pool.stop.set()
        finally:
            if pipe is not None:  # it exits on its own; close() waits for it, after the outputs are written
                pipe.finish()
                with self._lock:
                    self._finishing.append(pipe)
            pool.done.put(_DONE)

    def close(self) -> None:
        """Wait for the workers told to stop (each cleans up; killed after 10 s), then close the shared server."""
        with self._lock:
            pipes, self._finishing = self._finishing, []
        for p in pipes:
            p.close()
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.close()

    def kill_all(self) -> None:
        with self._lock:
            pipes = list(self._pipes.values())
        for p in pipes:
            try:
                p.kill()
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
