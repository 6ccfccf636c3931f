"""A batch worker: one trusted judge process and a warm sandbox server.

The server is its backend's, shared with the other local workers (a connection
handed over in ``SERVER_FD_ENV``), or, in a container or on a Dask worker, its own.

It reads jobs from stdin, one JSON object per line, and writes one JSON line
per job to stdout: ``{"id": ..., "result": SubmissionResult.to_dict()}``. The
pytest collection and the sandbox server stay warm across jobs (``grade()``
consumes a generator that blocks on stdin), so a job costs only the student's
code and the checks. The submission's bytes travel inside the job, so the
same worker runs unchanged as a local process, in a container, or behind a
Dask worker on another machine. Student code never runs here: it runs in the
sandboxes this process forks through its server.

    python -m autograder.batch.backends.worker '<config JSON>'

A job may choose its own suites (``"options": {"exercises": [...], "public": bool}``,
as ``validate`` sends): consecutive jobs with the same choice share one
``grade()`` call; the next choice starts another with the same warm server.

Lines it writes: ``{"ready": true, ...}`` once, then per job ``{"id", "result"}``
or ``{"id", "error"}`` (the worker could not grade it and exits), or
``{"fatal": message}`` (the assignment's suites cannot run: no job can be graded).
The batch acts on these lines; the exit status, which only its logs show, is the
one errors.TABLE gives what stopped the worker (WorkerFatal's after a fatal line).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import traceback
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder import gcpause
from autograder.batch.backends.config import WorkerConfig
from autograder.errors import WorkerFatal, meaning

if TYPE_CHECKING:
    from autograder.assignment import Assignment
    from autograder.options import GradeOptions
    from autograder.results import SubmissionResult


def _protocol_streams() -> tuple[Any, Any]:
    """The real stdin and stdout, kept for protocol lines; fds 0 and 1 then point elsewhere.

    The sandbox server and anything a library prints inherit fd 1; none of it
    may end up between two protocol lines. pytest replaces ``sys.stdin`` while
    it runs, so jobs are read from a private copy of fd 0.
    """
    jobs = os.fdopen(os.dup(0), "rb", buffering=0)
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return jobs, proto


def _safe_file_name(name: str) -> str:
    base = os.path.basename(name.replace("\\", "/")) or "submission.py"
    keep = "".join(c if c.isalnum() or c in "._- " else "_" for c in base).strip(" .")
    return keep or "submission.py"


def limit_judge_memory(gib: float) -> None:
    """Give this judge process a memory limit of its own.

    ``RLIMIT_DATA`` counts private writable memory (the heap, decoded replies,
    tensors), not address space merely reserved, so CUDA's large reservations
    still work where ``RLIMIT_AS`` would break them. Past the limit an
    allocation fails with MemoryError: that test (or that submission) fails
    with a message, and the worker, the batch and the other submissions go on.
    """
    import resource

    if gib <= 0:
        return
    want = int(gib * 2**30)
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (want, hard))


class Worker:
    """One worker's life: refuse to start where grading would be unsafe or wrong, then grade jobs until stdin ends."""

    def __init__(self, cfg: WorkerConfig, job_lines: Any, proto: Any) -> None:
        self.cfg = cfg
        self.job_lines = job_lines
        self.proto = proto
        self.current: dict[str, Any] = {}
        self.seen = 0
        self.tmp: Path | None = None
        self.server: Any = None
        self.pending: dict[str, Any] | None = None  # the next job, read but not yet graded

    def send(self, obj: dict[str, Any]) -> None:
        self.proto.write(json.dumps(obj) + "\n")
        self.proto.flush()

    def fatal(self, message: str) -> int:
        """Tell the batch that no job can be graded here (it raises WorkerFatal); the exit status is its."""
        self.send({"fatal": message})
        return meaning(WorkerFatal).exit

    def isolation_problem(self) -> str | None:
        """Why grading must not start here, or None: the pre-flight probe sets one sandbox up for real.

        A refused private root or /proc means no sandbox can start: fatal, even with
        --allow-unisolated (which then grades without namespaces instead). Refused namespaces
        are fatal unless --allow-unisolated. A refused seccomp filter or cgroup is only reported
        (every result's protections header says so).
        """
        if not self.cfg.options.isolate:
            return None
        from autograder.errors import SetupRefused
        from autograder.sandbox.preflight import advice, message, probe

        found = probe()
        if found.refused is not None:
            if self.cfg.fallback_unisolated:  # as asked: no namespaces at all, reported as NOT isolated
                self.cfg.options.isolate = False
                return None
            return message(found.refused)
        if found.unisolated and not self.cfg.allow_unisolated:
            refused = SetupRefused("namespaces", found.unisolated)
            return (f"sandboxes cannot be isolated on this host: the kernel refused the namespaces "
                    f"({found.unisolated}), so student code could read the hidden tests and reach the network. "
                    f"To fix it: {advice(refused.step, refused.reason)}")
        return None

    def read_job(self) -> dict[str, Any] | None:
        """The next job line; None at end of input or a stop line."""
        line = self.job_lines.readline()
        if not line:
            return None
        job = json.loads(line)
        return None if job.get("op") == "stop" else job

    def jobs(self, options: dict[str, Any] | None) -> Iterator[Path]:
        """Each job's submission, written to a private folder, while jobs ask for these per-job ``options``.

        Ends at end of input or a stop line, or before the first job that asks for other options: that
        job waits in ``self.pending`` for the next grading run (:meth:`grade_stream`).
        """
        assert self.tmp is not None
        while self.pending is not None and self.pending.get("options") == options:
            job, self.pending = self.pending, None
            folder = self.tmp / str(self.seen)
            self.seen += 1
            folder.mkdir()
            path = folder / _safe_file_name(job["name"])
            path.write_bytes(base64.b64decode(job["data"]))
            self.current["job"], self.current["folder"] = job, folder
            yield path
            self.pending = self.read_job()

    def grade_stream(self, assignment: Assignment, options: GradeOptions) -> None:
        """Grade jobs until input ends: one pytest run (collection, warm server) per run of equal per-job options."""
        from autograder.grade import grade

        self.pending = self.read_job()
        while self.pending is not None:
            asked = self.pending.get("options")
            first = self.pending
            grade(assignment, self.jobs(asked), options=replace(options, **(asked or {})),
                  on_result=self.on_result, server=self.server, stream=True, spread=self.spread)
            if self.pending is first:  # not even the first was taken (no suite to run): as a batch always did
                return

    def spread(self, path: Path) -> int:
        """Judges the job being graded may be graded by at once: what its line says (the batch's to lend)."""
        job = self.current.get("job") or {}
        value = job.get("spread", 1)
        return value if isinstance(value, int) and value > 0 else 1

    def on_result(self, r: SubmissionResult) -> None:
        job = self.current.pop("job")
        shutil.rmtree(self.current.pop("folder"), ignore_errors=True)
        self.send({"id": job["id"], "result": r.to_dict()})

    def serve(self) -> int:
        # Until the first submission this process only imports: torch, pytest, the judge, the suites,
        # a stand-in for torch._dynamo (judge/lazy_dynamo.py). The judge resumes collecting before it grades.
        gcpause.pause()
        why = self.isolation_problem()
        if why:
            return self.fatal(why)
        from autograder.assignment import load_assignment
        from autograder.batch.inputs import private_tempdir
        from autograder.batch.store import suite_version
        from autograder.errors import AssignmentError, SandboxCannotStart, ServerFailed, SuiteProblems
        from autograder.judge import lazy_dynamo
        from autograder.sandbox.client import SandboxServer
        from autograder.warmup import start_server

        cfg = self.cfg
        try:
            assignment = load_assignment(cfg.assignment, Path(cfg.course), only=cfg.options.exercises)
        except AssignmentError as e:
            return self.fatal(str(e))
        version = suite_version(assignment)
        if cfg.suite_version and cfg.suite_version != version:
            return self.fatal(f"this worker's copy of {cfg.assignment} is version {version}, the batch's is "
                              f"{cfg.suite_version}: the workers must grade with the same hidden material")
        # Nothing above imports torch. The sandbox server (the backend's shared one, or this worker's own,
        # started now) imports torch in its own process while this one imports the judge and collects the
        # suites (inside grade()); the first submission is read before waiting for it (GradingPlugin.grade_one).
        try:
            server = SandboxServer.from_environment() or start_server(assignment, cfg.options)
        except OSError as e:
            return self.fatal(f"the sandbox server could not start: {e}")
        self.server = server
        try:  # a judge only: torch._dynamo when it compiles, never for an optimizer's step
            lazy_dynamo.install()
        except Exception:  # noqa: BLE001 - only a speed-up: torch's own import error is reported by grade()
            pass
        limit_judge_memory(cfg.judge_memory_gb)  # the server is started already: it does not inherit the limit
        self.tmp = private_tempdir("worker")  # after the checks above, so that no early exit leaves it behind
        options = cfg.options
        options.protected.append(self.tmp)
        try:
            with server:
                self.send({"ready": True, "pid": os.getpid(), "suite_version": version})
                self.grade_stream(assignment, options)
        except SandboxCannotStart as e:  # no grade for anyone: the batch stops, the log keeps the sandbox's traceback
            print(f"sandbox set-up failed at step {e.step or '?'}:\n{e.traceback}", file=sys.stderr, flush=True)
            return self.fatal(e.message)
        except ServerFailed as e:
            return self.fatal(f"the sandbox server could not start: {e}")
        except AssignmentError as e:
            if isinstance(e, SuiteProblems) or "job" not in self.current:
                return self.fatal(str(e))
            self.send({"id": self.current["job"]["id"], "error": str(e)[-3000:]})
            return meaning(e).exit
        except Exception as e:  # noqa: BLE001 - report what stopped the worker, then exit
            job = self.current.get("job")
            detail = "".join(traceback.format_exception(e))[-3000:]
            if isinstance(e, MemoryError):
                detail = (f"the judge went over its own memory limit ({cfg.judge_memory_gb:g} GiB) grading this "
                          f"submission; it was not graded (the rest of the batch is unaffected)\n{detail[-1500:]}")
            self.send({"id": job["id"], "error": detail} if job else {"fatal": detail})
            return meaning(e).exit
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job_lines, proto = _protocol_streams()
    from autograder.sandbox.isolation import die_with_parent

    parent = os.getppid()
    die_with_parent()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        return 1
    return Worker(WorkerConfig.from_json(argv[0]), job_lines, proto).serve()


if __name__ == "__main__":
    code = main()
    # Everything is sent, the server is closed and the scratch folder removed: skip the interpreter's
    # shutdown (a second or more of torch's atexit work and module teardown, on the batch's critical path).
    sys.stderr.flush()
    os._exit(code)
