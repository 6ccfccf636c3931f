"""The judge's side of the sandbox: start the warm server, spawn, talk, kill.

Everything that comes back is untrusted: replies are matched to requests by
id, decoded with the safe wire format, and a sandbox that stops answering in
time is killed with its whole process tree.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import socket
import stat as _stat
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from autograder.errors import (
    ProtocolError,
    ReplyTooLarge,
    SandboxCannotStart,
    SandboxCrashed,
    SandboxError,
    SandboxNoReply,
    SandboxOutOfMemory,
    ServerFailed,
    SetupRefused,
    StudentException,
)
from autograder.sandbox.cgroups import AT_LIMIT_SHARE, OomCounter, PeakMemory, memory_in_use, set_memory_limit
from autograder.sandbox.isolation import TEST_REFUSE, Limits
from autograder.sandbox.sampled_peak import SampledPeak, cgroup_current

if TYPE_CHECKING:
    from autograder.sandbox import wire

# ``wire`` (numpy and torch) is imported where replies are decoded, not here: starting a server
# must not wait for torch, so that the server imports torch while the judge does (see SandboxServer).

OUTPUT_CAP = 64 * 1024
START_TIMEOUT = 60.0
# The first spawn after a warm request also waits for the warm-up's imports (the compiler's: minutes on a loaded
# machine). A server that says nothing for longer is killed: its reply stream can no longer be trusted.
WARM_TIMEOUT = 600.0
CLOSE_TIMEOUT = 30.0


# The errors of a request are defined in autograder/errors.py (the one tree); their old names stay here.
SandboxTimeout = SandboxNoReply  # the older name, for code outside this repository


def cannot_start_from_setup(error: dict[str, Any]) -> SandboxCannotStart:
    """The sandbox's own report of a refused set-up step, as the error that stops grading."""
    from autograder.sandbox.preflight import message

    step, reason = str(error.get("step", "set-up"))[:200], str(error.get("message", ""))[:1000]
    return SandboxCannotStart(message(SetupRefused(step, reason)), step=step, reason=reason,
                              traceback=str(error.get("traceback", ""))[-4000:])


def _clean_env() -> dict[str, str]:
    import autograder

    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(autograder.__file__)))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join([pkg_parent, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for k in (
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "LD_LIBRARY_PATH",
        "TORCHGRADER_NO_CGROUPS",
        "TORCHGRADER_CONTAINER_MEMORY",
        TEST_REFUSE,
        "container",  # podman's marker (isolation.container_engine)
    ):
        if k in os.environ:
            env[k] = os.environ[k]
    return env


SERVER_FD_ENV = "TORCHGRADER_SANDBOX_SERVER_FD"  # a batch worker's connection to its backend's shared server


class SandboxServer:
    """A warm server's connection; the server spawns sandboxes in milliseconds.

    Creating one only starts the server process (which imports torch and,
    with ``warm_compiler``, torch._dynamo; :meth:`warm_later` adds one tiny
    ``torch.compile`` so that every later sandbox inherits dynamo's warmed-up
    state): the caller goes on with its own imports meanwhile, and the first
    ``spawn`` (or ``wait_ready``) waits for the server to be ready. Started
    before the judge imports torch, the two imports run side by side instead
    of one after the other.

    One server may answer several judges: its owner (the process that started it)
    makes each judge's connection with :meth:`connect_judge`, and the judge opens it
    with :meth:`attached` (a batch's local workers share one server so: one import of
    torch and one warm-up for all of them, not one per worker).
    """

    def __init__(self, *, warm_compiler: bool = True, env: dict[str, str] | None = None) -> None:
        # Said again in each attach and fork (server.serve): a server started before its owner knew what it
        # grades (sandbox/prestart.py) learns it from the first.
        self.warm_compiler = warm_compiler
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = [sys.executable, "-m", "autograder.sandbox.server", str(child.fileno())]
        if warm_compiler:
            argv.append("--warm-compiler")
        # Ctrl-C (a terminal's, a Jupyter kernel's interrupt) must not kill a server that is still
        # starting, before its own handler is in place: an ignored signal stays ignored across exec.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            proc = subprocess.Popen(
                argv, pass_fds=[child.fileno()], cwd="/", env={**_clean_env(), **(env or {})}, stdin=subprocess.DEVNULL
            )
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        child.close()
        self._connect(parent, proc)

    def _connect(self, sock: socket.socket, proc: subprocess.Popen | None) -> None:
        self._lock = threading.Lock()
        self._ready = False
        self.proc = proc  # None on an attached connection: the server belongs to another process
        self.sock = sock
        self._file = sock.makefile("rb")
        self._warming = False  # a warm-up was requested and no sandbox has been started since
        self._judges = threading.Lock()  # connect_judge: one attach at a time on this connection

    @classmethod
    def attached(cls, fd: int) -> SandboxServer:
        """A judge's connection to a server another process owns (made by :meth:`connect_judge`)."""
        self = cls.__new__(cls)
        self.warm_compiler = False  # the owner's to say (it is the one that attaches and forks)
        self._connect(socket.socket(fileno=fd), None)
        return self

    @classmethod
    def from_environment(cls) -> SandboxServer | None:
        """The connection a batch's backend handed this worker (``SERVER_FD_ENV``), or None; read once."""
        value = os.environ.pop(SERVER_FD_ENV, "")
        if not value.isdigit():
            return None
        fd = int(value)
        try:
            if not _stat.S_ISSOCK(os.fstat(fd).st_mode):
                return None
        except OSError:
            return None
        return cls.attached(fd)

    def connect_judge(self, *, warm_up: bool = False) -> socket.socket:
        """A new connection to this server for a judge (pass it to the judge's process, then close it here).

        Never waits for the server: the request waits in the socket until the server is ready,
        and the judge reads its "ready" on its own connection. Only the owner attaches judges.
        ``warm_up``: the judges will grade more than one submission each; the server warms up now,
        between their requests (see server.serve), instead of at their second submission.
        """
        if self.proc is None:
            raise ServerFailed("only the process that started the sandbox server can connect judges to it")
        return self._attach({"op": "attach", **self._owner_says(warm_up)}, self._judges)

    def fork_worker(self, module: str, argv: list[str], env: dict[str, str], cwd: str, fds: list[int], *,
                    warm_up: bool = False) -> None:
        """Ask the server to fork a batch's worker (sandbox/zygote.py); the caller then reads its pid, on the
        status pipe (``fds``: the worker's stdin, stdout and stderr, and that pipe's write end).

        As :meth:`connect_judge`, never waits for the server: the request waits in the socket until the server
        has imported torch, and the worker's pid comes on the status pipe once it is forked.
        """
        if self.proc is None:
            raise ServerFailed("only the process that started the sandbox server can fork workers from it")
        # The worker's settings follow their header as a message of their own: the header carries the
        # descriptors, and a read that takes descriptors ends with the part of the stream they came with.
        body = json.dumps({"module": module, "argv": argv, "env": env, "cwd": cwd}).encode()
        header = {"op": "judge", "bytes": len(body), **self._owner_says(warm_up)}
        try:
            with self._judges:
                socket.send_fds(self.sock, [json.dumps(header).encode() + b"\n"], fds)
                self.sock.sendall(body)
        except OSError as e:
            raise ServerFailed(f"the sandbox server has exited ({e.strerror})") from None

    def _owner_says(self, warm_up: bool) -> dict[str, Any]:
        """What the owner's attach or fork tells the server besides: see :meth:`connect_judge`, server.serve."""
        says: dict[str, Any] = {"warm": "between requests"} if warm_up else {}
        if self.warm_compiler:
            says["compiler"] = True
        return says

    def attach_helper(self) -> socket.socket:
        """A second connection to this server for a copy of this judge (``judge/spread.py``), on any connection.

        The copy is this judge's own fork, as trusted as it is, so a judge may attach it where only the
        owner attaches other judges. The request goes in order with this judge's own (under the same lock)
        and, carrying a descriptor, alone in its message; the server says "ready" on the new connection.
        """
        return self._attach({"op": "attach"}, self._lock)

    def _attach(self, request: dict[str, Any], lock: threading.Lock) -> socket.socket:
        """Send ``request`` with the far end of a new connection (alone in its message: it carries a
        descriptor, so the server reads exactly this request); our end, for a judge."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with lock:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [theirs.fileno()])
        except OSError as e:
            ours.close()
            raise ServerFailed(f"the sandbox server has exited ({e.strerror})") from None
        finally:
            theirs.close()
        return ours

    @property
    def pid(self) -> int | None:
        """The server's pid, once it said it is ready (the same for every judge of a shared server)."""
        return self._pid if self._ready else None

    def _gone(self) -> bool:
        """The server has exited (ours), or this connection was given up (see :meth:`_abandon`)."""
        return self.sock.fileno() < 0 or (self.proc is not None and self.proc.poll() is not None)

    def _reply(self, timeout: float) -> bytes:
        """The next reply on this connection. A notice that the server is warming up for another judge
        (server.WARMING_NOTICE) is skipped, and allows the reply the warm-up's time."""
        self.sock.settimeout(timeout)
        try:
            while True:
                line = self._file.readline()
                if not line.startswith(b'{"notice"'):
                    return line
                self.sock.settimeout(max(timeout, WARM_TIMEOUT))
        finally:
            if not self._file.closed:
                self.sock.settimeout(None)

    def wait_ready(self) -> None:
        """Block until the server has imported torch; raises ServerFailed if it could not start."""
        with self._lock:
            self._wait_ready_locked()

    def _wait_ready_locked(self) -> None:
        if self._ready:
            return
        try:
            line = self._reply(START_TIMEOUT)
        except (TimeoutError, OSError):
            line = b""
        if not line:
            raise ServerFailed("the sandbox server failed to start (see the errors above)")
        try:
            hello = json.loads(line)
        except ValueError:
            hello = {}
        if isinstance(hello, dict) and hello.get("ok") is False:  # server._say_cannot_start
            raise ServerFailed(f"the sandbox server could not start: {str(hello.get('error'))[:500]}")
        self._pid = hello.get("pid") if isinstance(hello.get("pid"), int) else None
        self._ready = True

    def spawn(self, request: dict[str, Any]) -> tuple[socket.socket, int, int, dict[str, Any]]:
        """Returns (control socket, output pipe read end, sandbox pid, the server's facts about it)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        try:
            with self._lock:
                self._wait_ready_locked()
                if self._gone():
                    raise ServerFailed("the sandbox server has exited" if self.sock.fileno() >= 0 or self.proc
                                       else "the sandbox server stopped answering this judge (said above)")
                socket.send_fds(self.sock, [json.dumps(request).encode()], [theirs.fileno(), out_w])
                wait = WARM_TIMEOUT if self._warming else START_TIMEOUT
                try:
                    reply = json.loads(self._reply(wait) or b"{}")
                except TimeoutError:
                    # A late reply would be read as the next sandbox's, and the reader refuses every later read
                    # ("cannot read from timed out object"): the server is done for this judge, and says so once.
                    self._abandon()
                    raise ServerFailed(f"the sandbox server did not start a sandbox within {wait:.0f} s; "
                                       "it was stopped (the machine may be overloaded)") from None
                self._warming = False
        finally:
            theirs.close()
            os.close(out_w)
        if not reply.get("ok"):
            ours.close()
            os.close(out_r)
            raise RuntimeError(reply.get("error", "the sandbox could not be started"))
        return ours, out_r, int(reply["pid"]), reply

    def _abandon(self) -> None:
        """After a reply that never came: the server is stopped (ours), or this connection closed (shared)."""
        if self.proc is not None:
            self.proc.kill()
        else:
            self._file.close()
            self.sock.close()

    def warm_later(self, only: list[str] | None = None) -> None:
        """Ask the server to import what only some sandboxes use (see server.serve), for every later sandbox.

        Answered at once; the next spawn waits until the imports are done. Call
        it when more sandboxes are sure to come (a second submission is about
        to be graded, a notebook's check is done). Best effort: a server
        that is gone is told by the next spawn. ``only``: just these modules
        (of the server's LATER_PRELOAD), without the compiler warm-up.
        """
        try:
            with self._lock:
                self._wait_ready_locked()
                if self._gone():
                    return
                self.sock.sendall(json.dumps({"op": "warm", **({"only": only} if only is not None else {})}).encode())
                self._reply(START_TIMEOUT)
                self._warming = True
        except (OSError, RuntimeError):
            pass

    def close(self) -> None:
        """Close the connection; a server with no connection left removes its sandboxes' cgroups and exits.

        The owner also sends SIGUSR1, which stops imports still in progress (at start-up, or
        asked for by :meth:`warm_later`), so closing costs no wait for them; the server
        ignores it otherwise. It is killed only if it has not left after ``CLOSE_TIMEOUT``
        (killing it would leave cgroups behind). Close a shared server after its judges.
        """
        try:
            self._file.close()  # the makefile() reader keeps the socket open otherwise
            self.sock.close()
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGUSR1)
        finally:
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=CLOSE_TIMEOUT)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()

    def __enter__(self) -> SandboxServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class SandboxConfig:
    limits: Limits = field(default_factory=Limits)
    protected: list[str] = field(default_factory=list)
    isolate: bool = True
    threads: int = 1
    extra_read_only: list[str] = field(default_factory=list)  # more host paths to show read-only


class Sandbox:
    """One running sandbox process (and its descendants)."""

    def __init__(self, server: SandboxServer, config: SandboxConfig, start_timeout: float = START_TIMEOUT):
        self.config = config
        self._ids = itertools.count(1)
        self._output = bytearray()
        self.output_truncated = False
        self.alive = False
        request = {
            "op": "spawn",
            "limits": asdict(config.limits),
            "protected": [os.path.abspath(p) for p in config.protected],
            "isolate": config.isolate,
            "threads": config.threads,
            "extra_read_only": [os.path.abspath(p) for p in config.extra_read_only],
        }
        self.sock, self._out_r, self.pid, facts = server.spawn(request)
        self.scratch_fd: int | None = None  # the sandbox's scratch folder, opened by its init before student code
        self._oom_file = facts.get("oom_file") if isinstance(facts.get("oom_file"), str) else None
        self.memory_limit = config.limits.memory_bytes  # the whole sandbox's, where a cgroup holds it
        self._oom_counter: OomCounter | None = None
        if self._oom_file is not None:
            self._oom_counter = OomCounter(self._oom_file)
        self._ooms = self._oom_kills()
        self.alive = True
        self._stop_r, self._stop_w = os.pipe()  # tells the reader to stop at a kill (see _settle_output)
        self._settled = False
        self._settling = threading.Lock()
        self._reader = threading.Thread(target=self._read_until_stopped, daemon=True)
        self._reader.start()
        try:
            self.scratch_fd = self._receive_scratch(start_timeout)
            head, _ = self._receive("ready", time.monotonic() + start_timeout, start_timeout)
        except StudentException as e:  # no student code has run: the sandbox's own set-up failed
            self.kill()
            raise cannot_start_from_setup(e.error) from None
        except SandboxError as e:
            self.kill()
            raise SandboxCannotStart(
                f"the sandbox cannot start here: it never reported ready ({e}), so nothing is graded. "
                "The sandbox server's own errors, if any, are in the log above (a batch: the worker's log)"
            ) from None
        self.protections: dict[str, str] = head.get("protections") or {}
        if facts.get("memory"):  # the trusted server knows the limit's real scope
            self.protections["memory"] = str(facts["memory"])

    def _oom_kills(self) -> int:
        return 0 if self._oom_counter is None else self._oom_counter.value()

    def out_of_memory(self) -> bool:
        """True when the kernel killed a process of this sandbox for exceeding its cgroup's memory limit."""
        return self._oom_file is not None and self._oom_kills() > self._ooms

    # ------------------------------------------------------------------ output
    def _keep(self, chunk: bytes) -> None:
        room = OUTPUT_CAP - len(self._output)
        if room > 0:
            self._output += chunk[:room]
        if len(chunk) > room:
            self.output_truncated = True

    def _read_until_stopped(self) -> None:
        """The reader while the sandbox runs: its output into the buffer, until end of file or a kill."""
        poller = select.poll()
        poller.register(self._out_r, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        while self._stop_r not in dict(poller.poll()):  # at a kill, _settle_output takes what is left itself
            if not self._read_once():
                return

    def _drain(self) -> None:
        """The reader after a kill: what the dying processes still write, to the end of file."""
        while self._read_once():
            pass

    def _read_once(self) -> bool:
        """One read of the output pipe into the buffer; False at its end (it is closed then). A pipe that
        is not blocking raises BlockingIOError when it is empty."""
        try:
            chunk = os.read(self._out_r, 65536)
        except BlockingIOError:
            raise
        except OSError:
            chunk = b""
        if not chunk:
            try:
                os.close(self._out_r)
            except OSError:
                pass
            self._out_r = -1
            return False
        self._keep(chunk)
        return True

    def _settle_output(self) -> None:
        """At a kill: stop the reader and take what is already in the pipe, in this thread.

        Everything printed before the last reply is in the pipe by then (the runtime flushes before it
        answers), but a reader running beside the kill could still be about to read it when the judge
        takes ``output``: the end of a cell's output was lost so, now and then. A reader started afterwards
        reads the rest (what the dying processes still write) to the end of file, in the background.
        """
        with self._settling:
            if self._settled:
                return
            self._settled = True
        os.write(self._stop_w, b"x")
        self._reader.join()
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        if self._out_r < 0:
            return  # the reader reached the end of file: everything is in the buffer
        os.set_blocking(self._out_r, False)
        try:
            while self._read_once():
                pass
            return  # the end of file came too
        except BlockingIOError:  # empty for now: the dying processes may still write
            os.set_blocking(self._out_r, True)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def wait_output(self, seconds: float) -> None:
        """Wait (at most ``seconds``) until everything the killed sandbox printed has been read.

        The reader stops at end of file, which comes once the sandbox's processes are torn down. A kill
        does not wait for it: ``output`` then holds everything printed before the last reply, and may
        lack only what the dying processes wrote afterwards.
        """
        self._reader.join(seconds)

    @property
    def output(self) -> str:
        text = self._output.decode("utf-8", "replace")
        return text + ("\n[output truncated]" if self.output_truncated else "")

    # ------------------------------------------------------------------ requests
    def request(self, op: str, payload: Any = None, *, timeout: float, **fields: Any) -> tuple[dict, Any]:
        from autograder.sandbox import wire

        if not self.alive:
            raise SandboxCrashed("the sandbox is not running")
        rid = next(self._ids)
        data = wire.pack({"op": op, "id": rid, **fields}, payload)
        try:
            self.sock.settimeout(timeout)  # a sandbox that stops reading must not block the judge
            wire.send_frame(self.sock, data)
        except TimeoutError:
            self._no_reply(timeout)
        except OSError:
            self.kill()
            raise SandboxCrashed("the sandbox process is gone") from None
        return self._receive(rid, time.monotonic() + timeout, timeout)

    @property
    def has_cgroup(self) -> bool:
        """True when a cgroup bounds the whole sandbox (the server made one for it)."""
        return self._oom_file is not None

    def memory_in_use(self) -> int | None:
        """Bytes the sandbox's cgroup holds now; None without a cgroup (or once it is gone)."""
        return memory_in_use(self._oom_file) if self._oom_file is not None and self.alive else None

    def peak_memory(self) -> PeakMemory | SampledPeak | None:
        """A started measurement of this sandbox's peak memory; None where none can be made.

        Its cgroup's peak, read from the kernel. Where that peak cannot be reset (cgroup v2 before Linux
        6.12), the cgroup's memory sampled every millisecond; without a cgroup (inside a container whose
        cgroup file system is read-only, an ordinary user without delegation), the resident memory of the
        sandbox's process tree sampled from /proc (:mod:`autograder.sandbox.sampled_peak`). All are counted
        by the kernel and read by the judge, never reported by the student's process.
        """
        if not self.alive:
            return None
        if self._oom_file is not None:
            exact = PeakMemory(self._oom_file)
            if exact.start():
                return exact
            sampled = SampledPeak(self.pid, read=cgroup_current(exact.current_file))  # a peak it cannot reset
        else:
            sampled = SampledPeak(self.pid)
        return sampled if sampled.start() else None

    def narrow_memory(self, limit_bytes: int) -> bool:
        """Lower (or restore) the whole sandbox's memory limit; False without a cgroup or when refused."""
        if self._oom_file is None or not self.alive or not set_memory_limit(self._oom_file, limit_bytes):
            return False
        self.memory_limit = limit_bytes
        return True

    def _no_reply(self, timeout: float) -> NoReturn:
        """The request's time ran out: kill the sandbox, and say whether memory was the cause."""
        at_limit = self._at_memory_limit()  # read before the kill empties the cgroup
        self.kill()
        self._raise_if_out_of_memory()
        if at_limit:
            raise SandboxOutOfMemory(
                f"the sandbox was at its memory limit of {self.memory_limit / 2**30:.1f} GiB "
                "when the time ran out: the kernel was reclaiming memory for it instead of letting it run"
            ) from None
        raise SandboxNoReply(timeout) from None

    def _at_memory_limit(self) -> bool:
        if self._oom_file is None or not self.alive:
            return False
        used = memory_in_use(self._oom_file)
        return used is not None and used >= AT_LIMIT_SHARE * self.memory_limit

    def _receive(self, rid: Any, deadline: float, timeout: float) -> tuple[dict, Any]:
        from autograder.sandbox import wire

        frame: bytearray | None = None  # dropped as soon as it is decoded (it may be large)
        too_large = False
        try:
            frame = wire.recv_frame(self.sock, deadline, self._stop_if_out_of_memory if self._oom_file else None)
            head, payload = wire.unpack(frame, resolve_handle=_handle_node)
        except wire.RecvDeadlinePassed:
            self._no_reply(timeout)
        except (wire.PeerClosed, OSError):
            self.kill()
            self._raise_if_out_of_memory()
            raise SandboxCrashed("the sandbox process died") from None
        except wire.WireError as e:
            self.kill()
            raise ProtocolError(f"the sandbox sent a malformed reply ({e})") from None
        except MemoryError:  # raised below, outside this clause: a chained MemoryError's traceback would keep
            too_large = True  # the partial frame (its frames' locals) alive after the test, and the next ones fail
        finally:
            frame = None
        if too_large:
            self.kill()
            raise ReplyTooLarge("the sandbox's reply did not fit in the grader's memory limit")
        if self.out_of_memory():  # a child was killed for memory, though the first process answered
            self.kill()
            self._raise_if_out_of_memory()
        if head.get("id") != rid:
            self.kill()
            raise ProtocolError("the sandbox sent a reply that does not match the request")
        if not head.get("ok"):
            raise StudentException(head.get("error") or {})
        return head, payload

    def _receive_scratch(self, timeout: float) -> int | None:
        """The scratch folder's descriptor init sends before "ready" (None when it sent none: a failed set-up)."""
        from autograder.sandbox import wire

        mark = wire.SCRATCH_MARK
        self.sock.settimeout(timeout)
        try:
            if self.sock.recv(len(mark), socket.MSG_PEEK | socket.MSG_WAITALL) != mark:
                return None
            _, fds, _, _ = socket.recv_fds(self.sock, len(mark), 4)
        except OSError:
            return None  # the "ready" read that follows says what went wrong
        for extra in fds[1:]:
            os.close(extra)
        return fds[0] if fds else None

    def scratch_files(self, folder: str, *, max_files: int = 64, max_bytes: int = 64 << 20) -> dict[str, Any]:
        """The regular files of ``folder`` (a plain name in the sandbox's scratch), read by the judge itself.

        Listed and read through the descriptor init sent before any student code ran, never by
        anything inside the sandbox: ``{"files": {name: bytes}, "skipped": [why, ...]}``. Links are
        never followed, each file and the total are bounded (past a bound the file is skipped, said),
        and a missing folder gives no files.
        """
        out: dict[str, Any] = {"files": {}, "skipped": []}
        if self.scratch_fd is None:
            raise SandboxError("the sandbox's scratch folder is not available to the judge")
        if not isinstance(folder, str) or not folder or "/" in folder or folder in (".", "..") or "\0" in folder:
            out["skipped"].append(f"not a folder name: {str(folder)[:80]!r}")
            return out
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=self.scratch_fd)
        except OSError:
            return out
        total = 0
        try:
            with os.scandir(dfd) as it:
                names = []
                for i, entry in enumerate(it):
                    if i >= max_files:
                        out["skipped"].append(f"more than {max_files} entries: the rest were not read")
                        break
                    names.append(entry.name)
            for name in sorted(names):
                st = os.lstat(name, dir_fd=dfd)
                if not _stat.S_ISREG(st.st_mode):
                    out["skipped"].append(f"{name[:80]!r}: not a regular file")
                    continue
                if st.st_size > max_bytes - total:
                    out["skipped"].append(f"{name[:80]!r}: {st.st_size} bytes, past the {max_bytes} allowed")
                    continue
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
                with os.fdopen(fd, "rb") as f:
                    data = f.read(max_bytes - total + 1)
                if len(data) > max_bytes - total:
                    out["skipped"].append(f"{name[:80]!r}: grew past the {max_bytes} bytes allowed")
                    continue
                total += len(data)
                out["files"][name] = data
        except OSError as e:
            out["skipped"].append(f"could not be read ({e.strerror})")
        finally:
            os.close(dfd)
        return out

    def _stop_if_out_of_memory(self) -> None:
        """While waiting for a reply: a process of the sandbox was killed for memory, so stop now."""
        if self.out_of_memory():
            self.kill()
            self._raise_if_out_of_memory()

    def _raise_if_out_of_memory(self) -> None:
        if self.out_of_memory():
            limit = self.config.limits.memory_bytes / 2**30
            raise SandboxOutOfMemory(
                f"the sandbox ran out of memory: together, the code and every process it started "
                f"went over the limit of {limit:.1f} GiB"
            )

    def kill(self) -> None:
        """Kill the sandbox and everything it started; safe to call twice."""
        if self.alive:
            self.alive = False
            for kill in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
                try:
                    kill()
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            self.sock.close()
        except OSError:
            pass
        if self.scratch_fd is not None:  # it keeps the sandbox's tmpfs alive while open
            os.close(self.scratch_fd)
            self.scratch_fd = None
        if self._oom_counter is not None:
            self._oom_counter.close()
        if getattr(self, "_reader", None) is not None:
            # What was printed before the last reply is in the buffer now; the rest is read to the end of
            # file in the background (wait_output), not waited for: kills stay cheap.
            self._settle_output()


def _handle_node(node: dict) -> wire.HandleRef:
    from autograder.sandbox import wire

    hid, typ, mro = node.get("id"), node.get("type", ""), node.get("mro", [])
    if type(hid) is not int or not isinstance(typ, str) or not isinstance(mro, list):
        raise wire.WireError("bad handle")
    return wire.HandleRef(hid, typ[:200], tuple(str(m)[:300] for m in mro[:64]), bool(node.get("callable")))
