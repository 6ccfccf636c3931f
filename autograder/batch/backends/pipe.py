"""The parent's end of one worker: a subprocess spoken to in JSON lines."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

from autograder.batch.backends import Job
from autograder.errors import WorkerDied, WorkerFatal


class _Payload(Protocol):
    """Any job that can put itself on the wire (a Job, or one that arrived over the network)."""

    id: str
    name: str

    def payload(self) -> dict[str, Any]: ...


READY_TIMEOUT = 180.0  # importing torch twice on a loaded machine, or pulling a container


class _Process(Protocol):
    """What a WorkerPipe uses of its worker's process: a ``subprocess.Popen``, or a worker the sandbox server
    forked (``sandbox.zygote.ForkedWorker``)."""

    pid: int
    stdin: IO[bytes] | None
    stdout: IO[bytes] | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class WorkerPipe:
    def __init__(self, argv: list[str], label: str, log: Path | None = None,
                 env: dict[str, str] | None = None, on_kill: list[str] | None = None,
                 explain: Callable[[int], str] | None = None, pass_fds: tuple[int, ...] = ()) -> None:
        err = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                    env=env, start_new_session=False, pass_fds=pass_fds)
        except OSError as e:
            raise WorkerDied(f"{label}: could not start `{argv[0]}` ({e.strerror})") from None
        finally:
            if not isinstance(err, int):
                err.close()
        self._start(proc, label, log, on_kill, explain)

    @classmethod
    def of(cls, proc: _Process, label: str, log: Path | None = None,
           explain: Callable[[int], str] | None = None) -> WorkerPipe:
        """The pipe of a worker started some other way (forked by the sandbox server), once it says it is ready."""
        self = cls.__new__(cls)
        self._start(proc, label, log, None, explain)
        return self

    def _start(self, proc: _Process, label: str, log: Path | None, on_kill: list[str] | None,
               explain: Callable[[int], str] | None) -> None:
        self.label = label
        self.log = log
        self.explain = explain  # what an exit code means (``docker run``: 125 is docker's own failure)
        self.on_kill = on_kill  # a command that also stops it (``docker kill NAME``)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.proc = proc
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        hello = self._next(READY_TIMEOUT, "before it was ready")
        if hello.get("fatal"):
            self.close()
            raise WorkerFatal(hello["fatal"])
        if not hello.get("ready"):
            self.close()
            raise WorkerDied(f"{label}: said {str(hello)[:200]} instead of ready")
        self.info: dict[str, Any] = hello

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _log_tail(self) -> str:
        if not self.log:
            return ""
        try:
            with open(self.log, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log) - 1500))
                tail = f.read().decode("utf-8", "replace").strip()
            return f"; its log ({self.log}) ends with:\n{tail}" if tail else ""
        except OSError:
            return ""

    def _next(self, timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise WorkerDied(f"{self.label}: the worker said nothing for {timeout:.0f} s {what}; it was "
                                 "stopped" + self._log_tail()) from None
            if line is None:
                code = self.proc.wait()
                meaning = self.explain(code) if self.explain else ""
                raise WorkerDied(f"{self.label}: the worker exited with code {code} {what}"
                                 + (f": {meaning}" if meaning else "") + self._log_tail())
            try:
                return json.loads(line)
            except ValueError:
                continue  # not a protocol line

    def grade(self, job: Job | _Payload, timeout: float) -> dict[str, Any]:
        """The result dict of one job; raises WorkerDied (the worker is then gone) or WorkerFatal."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(job.payload()) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            raise WorkerDied(f"{self.label}: the worker is gone" + self._log_tail()) from None
        reply = self._next(timeout, f"while grading {job.name}")
        if reply.get("fatal"):
            self.close()
            raise WorkerFatal(reply["fatal"])
        if reply.get("id") != job.id:
            self.kill()
            raise WorkerDied(f"{self.label}: answered job {reply.get('id')!r} while grading {job.id!r}")
        if "error" in reply:
            self.close()
            raise WorkerDied(f"{self.label}: {reply['error']}")
        return reply["result"]

    def kill(self) -> None:
        if self.on_kill:
            subprocess.run(self.on_kill, capture_output=True, timeout=30, check=False)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def finish(self) -> None:
        """Tell the worker there is no more work (EOF on stdin) without waiting for it to exit."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass

    def close(self, wait: float = 10.0) -> None:
        """Let the worker finish (EOF on stdin ends its loop); kill it if it does not."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.proc.stdout:
            self.proc.stdout.close()
