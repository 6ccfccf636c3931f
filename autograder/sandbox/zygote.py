"""A batch's judges forked from its warm sandbox server: one import of torch for the server and every worker.

A batch's local workers share one sandbox server (``ProcessBackend``). Started as
processes of their own, two workers and the server imported torch at once: some
3 s of CPU before the first sandbox on a 2-core machine, while the class review
waited for a core too. Where each worker will grade more than one submission
(a batch with more submissions than workers, a service), the backend asks the
server instead (``{"op": "judge"}``): once it has imported torch, the server
forks the worker, which only imports pytest and collects its suites.

Why this is as safe as a fresh interpreter: the server never runs student code
and never reads what a sandbox says (a sandbox speaks to its judge over a socket
the server only hands on), so its memory is trusted code's. The fork keeps
nothing of the server's but its imports: every descriptor except the worker's
own pipes and its connection is closed, the signals and the environment are a
worker's as the backend would have started it, and the worker never returns
into the server's code (it ends with ``os._exit``).

Who waits: the server's children are reaped by the kernel (SIGCHLD ignored), so a
small waiter between the server and the worker reports the worker's pid, then its
exit status, on a pipe the backend reads (:class:`ForkedWorker`, the part of
``subprocess.Popen`` that ``WorkerPipe`` uses). The waiter kills the worker when
the backend's process dies (its end of that pipe closes) and dies with the server.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from typing import IO, Any

STATUS_WAIT = 180.0  # seconds the backend waits for the forked worker's pid (the server imports torch first)
_HIGH_FD = 64  # where the worker's descriptors wait while every other one is closed
WORKER_NAME, WAITER_NAME = b"tg-judge", b"tg-waiter"  # their command names (/proc/PID/comm)
CONNECTION_FD = 3  # the forked worker's connection to the server
PR_SET_NAME = 15


# ---------------------------------------------------------------- the server's side
def read_settings(conn: Any, header: dict[str, Any], read: bytes, timeout: float = 30.0) -> dict[str, Any] | None:
    """A worker's settings (argv, env, cwd): the ``header["bytes"]`` bytes after the header, ``read`` of them
    already read; None when the owner went or sent something else (the server then drops its connection)."""
    size = header.get("bytes")
    if not isinstance(size, int) or not 0 <= size <= 1 << 26:
        return None
    data = bytearray(read)
    conn.settimeout(timeout)
    try:
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        settings = json.loads(bytes(data[:size]))
    except (OSError, ValueError):
        return None
    finally:
        with contextlib.suppress(OSError):
            conn.settimeout(None)
    return settings if isinstance(settings, dict) and len(data) == size else None


def fork_worker(req: dict[str, Any], conn: int, fds: list[int]) -> None:
    """Fork the waiter (and through it the worker) for one ``{"op": "judge"}`` request; never raises.

    ``conn``: the worker's end of its connection to this server; ``fds``: the worker's stdin, stdout and
    stderr, and the write end of the status pipe. The caller keeps its own descriptors; these are the
    worker's only, and are closed here once forked.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        pid = -1  # the backend reads EOF on the status pipe and starts the worker as a process of its own
    if pid == 0:
        code = 70
        try:
            code = _waiter(req, conn, fds)
        except BaseException:  # noqa: BLE001 - a forked copy of the server must never return into it
            pass
        finally:
            os._exit(code)
    for fd in (conn, *fds):
        with contextlib.suppress(OSError):
            os.close(fd)


def _keep_only(fds: list[int]) -> None:
    """Descriptors 0.. become ``fds``, in order; every other descriptor of the server's is closed.

    Garbage the server had not collected yet is collected first, while its descriptors are still its own:
    a socket object finalised later would close whatever descriptor then had its number.
    """
    gc.collect()
    gc.freeze()
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, _HIGH_FD + n) for n, fd in enumerate(fds)]
    for n, fd in enumerate(high):
        os.dup2(fd, n)
    os.closerange(len(fds), 1 << 20)


def _name(name: bytes) -> None:
    """This process's command name (``ps -o comm``, ``top``): its command line is still the server's."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)


def _waiter(req: dict[str, Any], conn: int, fds: list[int]) -> int:
    """Between the server and the worker: its pid and exit status on the status pipe (descriptor 4 here)."""
    from autograder.sandbox import isolation as iso

    _name(WAITER_NAME)
    iso.die_with_parent()  # the server went: so does its worker (the backend starts another, with a new server)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    _keep_only([*fds[:3], conn, fds[3]])  # 0-2: the worker's stdio, 3 (CONNECTION_FD): its connection, 4: status
    worker = os.fork()
    if worker == 0:
        code = 70
        try:
            os.close(4)
            code = _worker(req)
        except BaseException:  # noqa: BLE001 - said on the worker's stderr (its log), never the server's
            with contextlib.suppress(Exception):
                traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os._exit(code)
    for fd in (0, 1, 3):  # the worker's alone: its stdin's end and its connection's hang-up are the worker's
        os.close(fd)
    os.write(4, json.dumps({"pid": worker}).encode() + b"\n")
    status = _wait(worker)
    with contextlib.suppress(OSError):
        os.write(4, json.dumps({"exit": status}).encode() + b"\n")
    return 0


def _wait(worker: int, status: int = 4) -> int:
    """The worker's exit status as Popen gives it; the worker is killed first if the backend's process died
    (its end of the status pipe closed: POLLERR on ours)."""
    try:
        pidfd: int | None = os.pidfd_open(worker)
    except OSError:  # a kernel before 5.3: look every second instead
        pidfd = None
    poller = select.poll()
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    poller.register(status, 0)
    while True:
        try:
            events = poller.poll(None if pidfd is not None else 1000)
        except InterruptedError:
            continue
        if any(fd == status for fd, _ in events):
            with contextlib.suppress(OSError):
                os.kill(worker, signal.SIGKILL)
        elif pidfd is None:
            pid, code = os.waitpid(worker, os.WNOHANG)
            if pid == 0:
                continue
            return os.waitstatus_to_exitcode(code)
        _, code = os.waitpid(worker, 0)
        return os.waitstatus_to_exitcode(code)


def _worker(req: dict[str, Any]) -> int:
    """Become what ``python -m MODULE ARGV`` would have been (the backend names its worker's module, whose
    ``main(argv)`` returns the exit status): its connection to this server is descriptor CONNECTION_FD."""
    import importlib

    _name(WORKER_NAME)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh interpreter
    env = {str(k): str(v) for k, v in dict(req.get("env") or {}).items()}
    os.environ.clear()
    os.environ.update(env)
    cwd = str(req.get("cwd") or "/")
    os.chdir(cwd)
    sys.path[0] = cwd  # `python -m` puts the working folder first: the server's was "/"
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    import tempfile

    tempfile.tempdir = None  # the server's, from its clean environment: found again from TMPDIR and the rest
    argv = [str(a) for a in req.get("argv") or []]
    module = str(req.get("module") or "")
    if not module.startswith("autograder."):  # the grader's own entry points only
        raise ValueError(f"not a worker module of the grader: {module!r}")
    main = importlib.import_module(module)
    sys.argv = [str(main.__file__), *argv]
    return int(main.main(argv))


# ---------------------------------------------------------------- the backend's side
class ForkedWorker:
    """A worker the sandbox server forked: the part of ``subprocess.Popen`` that ``WorkerPipe`` uses.

    It is not this process's child, so it is signalled through a pidfd and its exit status is read from the
    status pipe its waiter writes.
    """

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes], status: int, pid: int, read: bytes = b"") -> None:
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout
        self.pid = pid
        self.returncode: int | None = None
        self._status = status
        self._read = read  # what the status pipe said after the pid line (its exit line, if it came with it)
        self._lock = threading.Lock()  # a slot's thread and the batch's (kill_all) may wait at once
        self._pidfd: int | None
        try:
            self._pidfd = os.pidfd_open(pid)
        except OSError:  # gone already (its exit status is on the way), or a kernel before 5.3
            self._pidfd = None

    def poll(self) -> int | None:
        self._settle(0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired("worker", timeout or 0.0)
            self._settle(0.5 if left is None else min(left, 0.5))
        return self.returncode

    def kill(self) -> None:
        with self._lock:
            if self.returncode is not None:
                return
            with contextlib.suppress(OSError):
                if self._pidfd is not None:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                else:  # no pidfd (a kernel before 5.3): its waiter has not reported it gone, so the pid is its
                    os.kill(self.pid, signal.SIGKILL)

    def _settle(self, timeout: float) -> None:
        """Read the exit status if the waiter has written it within ``timeout`` (threads may ask at once)."""
        with self._lock:
            if self.returncode is not None:
                return
            status, read = self._status, self._read
        if not read:
            try:
                if not select.select([status], [], [], timeout)[0]:
                    return
            except (OSError, ValueError):  # closed meanwhile by a thread that read it
                return
        with self._lock:
            if self.returncode is None:
                self._read_exit()

    def _read_exit(self) -> None:
        """The waiter's last line; EOF without one: the waiter itself was killed (the worker with it)."""
        data, self._read = self._read, b""
        while True:
            try:
                chunk = os.read(self._status, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        code = -signal.SIGKILL
        for line in data.splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                code = int(json.loads(line)["exit"])
        self.returncode = code
        for fd in (self._status, self._pidfd):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._status, self._pidfd = -1, None


def read_pid(status: int, timeout: float = STATUS_WAIT) -> tuple[int | None, bytes]:
    """The worker's pid (the waiter's first line on the status pipe; None when the server forked none), and
    what came after that line."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([status], [], [], left)[0]:
            return None, b""
        chunk = os.read(status, 4096)
        if not chunk:
            return None, b""
        data += chunk
    first, rest = data.split(b"\n", 1)
    try:
        pid = json.loads(first)["pid"]
    except (ValueError, KeyError, TypeError):
        return None, b""
    return (pid, rest) if isinstance(pid, int) and pid > 0 else (None, b"")

