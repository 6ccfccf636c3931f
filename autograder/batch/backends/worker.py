"""A batch worker: one trusted judge process with its own warm sandbox server.

It reads jobs from stdin, one JSON object per line, and writes one JSON line
per job to stdout: ``{"id": ..., "result": SubmissionResult.to_dict()}``. The
pytest collection and the sandbox server stay warm across jobs (``grade()``
consumes a generator that blocks on stdin), so a job costs only the student's
code and the checks. The submission's bytes travel inside the job, so the
same worker runs unchanged as a local process, in a container, or behind a
Dask worker on another machine. Student code never runs here: it runs in the
sandboxes this process forks through its server.

    python -m autograder.batch.backends.worker '<config JSON>'

Lines it writes: ``{"ready": true, ...}`` once, then per job ``{"id", "result"}``
or ``{"id", "error"}`` (the worker could not grade it and exits), or
``{"fatal": message}`` (the assignment's suites cannot run: no job can be graded).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import traceback
from pathlib import Path
from typing import Any

from autograder.batch.backends.config import WorkerConfig


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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job_lines, proto = _protocol_streams()

    def send(obj: dict[str, Any]) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    from autograder.sandbox.isolation import die_with_parent

    parent = os.getppid()
    die_with_parent()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        return 1

    cfg = WorkerConfig.from_json(argv[0])
    if cfg.options.isolate and not cfg.allow_unisolated:
        from autograder.sandbox.isolation import unavailable_reason

        why = unavailable_reason()
        if why:
            send({"fatal": f"sandboxes cannot be isolated on this host ({why}): student code could read the "
                           "hidden tests and reach the network. Run as a user allowed to create user namespaces "
                           "(in Docker: see docker/README.md for the --security-opt flags), or pass "
                           "--allow-unisolated to grade anyway with the protections reported as NOT isolated."})
            return 2
    from autograder.assignment import AssignmentError, load_assignment
    from autograder.batch.store import suite_version
    from autograder.grade import grade, needs_compiler
    from autograder.sandbox.client import SandboxServer

    try:
        assignment = load_assignment(cfg.assignment, Path(cfg.course), only=cfg.options.exercises)
    except AssignmentError as e:
        send({"fatal": str(e)})
        return 2
    # Nothing above imports torch. The sandbox server starts now and imports torch in its own process
    # while this one imports the judge and collects the suites (inside grade()); the first job waits
    # for it to be ready.
    try:
        server = SandboxServer(warm_compiler=needs_compiler(assignment, cfg.options))
    except OSError as e:
        send({"fatal": f"the sandbox server could not start: {e}"})
        return 2
    version = suite_version(assignment)
    if cfg.suite_version and cfg.suite_version != version:
        server.close()
        send({"fatal": f"this worker's copy of {cfg.assignment} is version {version}, the batch's is "
                       f"{cfg.suite_version}: the workers must grade with the same hidden material"})
        return 2
    from autograder.batch.inputs import private_tempdir

    tmp = private_tempdir("worker")
    options = cfg.options
    options.protected.append(tmp)
    current: dict[str, Any] = {}

    def jobs():
        try:
            server.wait_ready()
        except RuntimeError as e:
            current["fatal"] = True
            send({"fatal": f"the sandbox server could not start: {e}"})
            return
        while True:
            line = job_lines.readline()
            if not line:
                return
            job = json.loads(line)
            if job.get("op") == "stop":
                return
            folder = tmp / str(len(current.setdefault("seen", [])))
            current["seen"].append(1)
            folder.mkdir()
            path = folder / _safe_file_name(job["name"])
            path.write_bytes(base64.b64decode(job["data"]))
            current["job"], current["folder"] = job, folder
            yield path

    def on_result(r) -> None:
        job = current.pop("job")
        shutil.rmtree(current.pop("folder"), ignore_errors=True)
        send({"id": job["id"], "result": r.to_dict()})

    limit_judge_memory(cfg.judge_memory_gb)  # the server is started already: it does not inherit the limit
    try:
        with server:
            send({"ready": True, "pid": os.getpid(), "suite_version": version})
            grade(assignment, jobs(), options=options, on_result=on_result, server=server)
        if current.get("fatal"):
            return 2
    except AssignmentError as e:
        if "suites have problems" in str(e) or "job" not in current:
            send({"fatal": str(e)})
            return 2
        send({"id": current["job"]["id"], "error": str(e)[-3000:]})
        return 1
    except Exception as e:  # noqa: BLE001 - report what stopped the worker, then exit
        job = current.get("job")
        detail = "".join(traceback.format_exception(e))[-3000:]
        if isinstance(e, MemoryError):
            detail = (f"the judge went over its own memory limit ({cfg.judge_memory_gb:g} GiB) grading this "
                      f"submission; it was not graded (the rest of the batch is unaffected)\n{detail[-1500:]}")
        send({"id": job["id"], "error": detail} if job else {"fatal": detail})
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is sent, the server is closed and the scratch folder removed: skip the interpreter's
    # shutdown (a second or more of torch's atexit work and module teardown, on the batch's critical path).
    sys.stderr.flush()
    os._exit(code)
