"""Run a function on every rank of a gloo process group, inside the sandbox.

Multi-process student code (``torch.distributed``) is graded by calling the
student's function on every rank of a group the *grader* starts. Probes call
:func:`run_ranks`; it forks one process per rank from the sandbox (torch is
already imported, so a rank starts in milliseconds; ``spawn`` would import
torch again per rank and cannot pickle notebook functions), each rank joins a
gloo group through a ``file://`` store in the sandbox's scratch folder and
talks over the sandbox's own loopback (the only network interface its network
namespace has), runs ``body(rank, world_size)``, and sends its plain result
back over a socket pair with the wire format.

Why the ranks wait to be released: a rank that tears its group down and exits
while a peer is still finishing a collective with it can reset the peer's
connection. So each rank reports, then waits until every rank has reported
(or the run has failed) before the grader destroys its group and the process
exits. A rank that hangs (a barrier only some ranks reach, mismatched
collectives), raises, or exits early stops the whole run: the other ranks are
given a moment to report, then every rank is killed (SIGKILL) and reaped, so
nothing is left behind whatever the student's code did with the group
(never destroyed it, or destroyed it itself).

Nothing here is trusted: it runs beside student code, which can rewrite it.
The judge recomputes every expected value itself; see
:mod:`autograder.judge.ranks` for the judge's side.
"""

from __future__ import annotations

import faulthandler
import linecache
import os
import re
import selectors
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

# Imported now, not where they are used: once the runtime hides the grader from graded code,
# a rank (forked after that) can no longer import anything of autograder.
from autograder.errors import MissingName
from autograder.sandbox import wire
from autograder.sandbox.describe import _cell_of, describe_exception
from autograder.sandbox.isolation import die_with_parent

GRACE_SECONDS = 0.5  # after a rank fails, how long the others get to report before all are killed
TIMEOUT = 10.0  # seconds every rank has for its body, unless the caller gives its own
_PREFIX = wire._PREFIX  # magic, header length, body length: where a frame ends


def _rank_env(rank: int, world_size: int) -> dict[str, str]:
    """torchrun's variables, as on a cluster of nodes with 2 processes each (so LOCAL_RANK 0 is on every node)."""
    per_node = 2
    node = rank // per_node
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(rank % per_node),
        "LOCAL_WORLD_SIZE": str(min(per_node, world_size - node * per_node)),
        "GROUP_RANK": str(node),
        "GLOO_SOCKET_IFNAME": "lo",
    }


def _close_other_fds(keep: set[int]) -> None:
    try:
        fds = [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _group_sum(rank: int, value: float) -> float | None:
    """One all_reduce (SUM) on the default group of ``value * (rank + 1)``, with a short wait; None if it fails.

    The judge chose ``value`` and checks the sum itself: a group that is gone (or a
    rank that left it) cannot produce it, whatever ``dist.is_initialized()`` says.
    """
    try:
        import torch
        import torch.distributed as dist

        t = torch.tensor([float(value) * (rank + 1)], dtype=torch.float64)
        work = dist.all_reduce(t, async_op=True)
        work.wait(timeout=timedelta(seconds=3))
        return float(t.item())
    except BaseException:  # noqa: BLE001 - no group, or a broken one: no sum
        return None


def _rank_main(
    rank: int, world_size: int, store: str, sock: socket.socket, body: Callable[[int, int], Any], timeout: float,
    group_check: float | None = None,
) -> None:
    """The forked rank; never returns."""
    code = 0
    try:
        import torch.distributed as dist

        die_with_parent()  # a rank never outlives the sandbox process that started it
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _close_other_fds({sock.fileno()})
        fault = open(_fault_path(store, rank), "w")  # noqa: SIM115 - held open until os._exit
        faulthandler.enable(file=fault, all_threads=True)  # where a native abort (gloo's) stopped the rank
        os.environ.update(_rank_env(rank, world_size))
        try:
            dist.init_process_group(
                "gloo",
                init_method=f"file://{store}",
                rank=rank,
                world_size=world_size,
                timeout=timedelta(seconds=max(1.0, timeout)),
            )
        except BaseException as e:  # noqa: BLE001 - reported as the grader's own failure
            head: dict[str, Any] = {"status": "setup", "error": describe_exception(e)}
            wire.send_frame(sock, wire.pack(head))
            os._exit(3)
        try:
            value = body(rank, world_size)
            head, payload = {"status": "ok"}, value
        except SystemExit as e:
            head, payload = {"status": "exited", "error": {"message": f"sys.exit({e.code!r})"}}, None
        except BaseException as e:  # noqa: BLE001 - student code may raise anything
            head, payload = {"status": "error", "error": describe_exception(e)}, None
        head["group_alive"] = bool(dist.is_initialized())
        try:
            data = wire.pack(head, payload)
        except BaseException as e:  # noqa: BLE001 - an unencodable value is the student's
            data = wire.pack({"status": "error", "error": describe_exception(e), "group_alive": head["group_alive"]})
        wire.send_frame(sock, data)
        released = sock.recv(1)  # released: every rank has reported (or the run is over)
        if group_check is not None and released == b"R":
            # every rank reported ok and was released, so every rank takes part: no rank can hang here
            wire.send_frame(sock, wire.pack({"group_sum": _group_sum(rank, group_check)}))
        if dist.is_initialized():  # the grader destroys the group, whatever the student did
            dist.destroy_process_group()
    except BaseException:  # noqa: BLE001 - the parent sees a rank with no report
        code = 4
    finally:
        for stream in (sys.stdout, sys.stderr):  # what the rank printed reaches the output; os._exit drops it
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - the student may have replaced the stream
                pass
        os._exit(code)


class _Reader:
    """Collects one wire frame from a rank's socket, without blocking."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.eof = False

    def complete(self) -> bool:
        if len(self.buf) < _PREFIX.size:
            return False
        _, hlen, blen = _PREFIX.unpack_from(self.buf)
        return len(self.buf) >= _PREFIX.size + hlen + blen


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by signal {name}"
    return f"exit code {os.WEXITSTATUS(status)}" if os.WIFEXITED(status) else "ended"


def run_ranks(world_size: int, body: Callable[[int, int], Any], *, timeout: float = TIMEOUT,
              group_check: float | None = None) -> dict[str, Any]:
    """Run ``body(rank, world_size)`` on every rank of a fresh gloo group; the report as plain values.

    Returns ``{"world_size": w, "ranks": [per rank]}``, each rank a dict with
    ``rank``, ``status`` (``ok``, ``error``, ``exited``, ``timeout``,
    ``stopped`` (killed because another rank failed) or ``setup`` (the group
    could not start)), ``value`` (what ``body`` returned, when ok), ``error``
    (the exception as plain data), ``exit`` (how the process ended) and
    ``group_alive`` (whether the group was still initialized after ``body``) and, when the
    judge passed ``group_check``, ``group_sum``: the result of one all_reduce of
    ``group_check * (rank + 1)`` on the default group, run once every rank has reported and been
    released (None when it failed, or when the ranks were never released).
    """
    if not 1 <= int(world_size) <= 16:
        raise ValueError("world_size must be between 1 and 16")
    scratch = tempfile.mkdtemp(prefix="ranks-", dir=tempfile.gettempdir())
    store = os.path.join(scratch, "store")
    socks: dict[int, socket.socket] = {}
    pids: dict[int, int] = {}
    try:
        for rank in range(world_size):
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                ours.close()
                for s in socks.values():
                    s.close()
                _rank_main(rank, world_size, store, theirs, body, timeout, group_check)
            theirs.close()
            socks[rank], pids[rank] = ours, pid
        return _collect(world_size, socks, pids, timeout, store, group_check)
    finally:
        for s in socks.values():
            s.close()
        for pid in pids.values():  # only ranks not reaped yet are left (an exception in the grader's loop)
            _kill_and_reap(pid)
        shutil.rmtree(scratch, ignore_errors=True)  # the file store's files; what cannot go stays in /tmp


def _kill_and_reap(pid: int) -> str:
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return _describe_exit(status)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        return _describe_exit(status)
    except (ChildProcessError, ProcessLookupError):
        return "ended"


def _fault_path(store: str, rank: int) -> str:
    return f"{store}.fault{rank}"


_FAULT_FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+) in (?P<name>\S+)', re.M)


def _abort_site(store: str, rank: int) -> dict[str, Any] | None:
    """Where a rank that died of a signal was, from faulthandler's dump: the collective and the student's frame.

    gloo aborts the whole process (SIGABRT, no Python exception) when ranks pass it mismatched tensors;
    the Python stack at that moment names the ``torch.distributed`` function that was running and the
    student's line that called it.
    """
    try:
        with open(_fault_path(store, rank), encoding="utf-8", errors="replace") as f:
            text = f.read(64_000)
    except OSError:
        return None
    if not text.strip():
        return None
    collective, where = "", None
    for m in _FAULT_FRAME.finditer(text):  # most recent call first
        file, name = m.group("file"), m.group("name")
        if not collective and file.replace("\\", "/").endswith("torch/distributed/distributed_c10d.py") \
                and not name.startswith("_"):
            collective = name
        cell = _cell_of(file)
        if where is None and cell is not None:
            line = int(m.group("line"))
            where = [cell, line, name, linecache.getline(file, line).strip()[:200]]
    return {"collective": collective, "frames": [where] if where else []}


def _collect(world_size: int, socks: dict[int, socket.socket], pids: dict[int, int], timeout: float,
             store: str = "", group_check: float | None = None) -> dict:
    readers, timed_out = _read_reports(socks, timeout)
    out = [_entry(r, readers[r], timed_out) for r in range(world_size)]
    if all(readers[r].complete() for r in range(world_size)) and all(e["status"] == "ok" for e in out):
        for s in socks.values():  # release: each rank destroys its group and exits
            try:
                s.setblocking(True)
                s.send(b"R")
            except OSError:
                pass
        if group_check is not None:
            _read_group_sums(socks, out, time.monotonic() + 5.0)
        end = time.monotonic() + 2.0
        for r, pid in pids.items():
            out[r]["exit"] = _wait_until(pid, end)
    for r, pid in pids.items():
        if "exit" not in out[r]:
            out[r]["exit"] = _kill_and_reap(pid)
        if store and out[r]["status"] == "exited" and "signal" in str(out[r]["exit"]):
            out[r]["abort"] = _abort_site(store, r)
    pids.clear()  # every rank is reaped
    return {"world_size": world_size, "ranks": out, "seconds": timeout}


def _read_group_sums(socks: dict[int, socket.socket], out: list[dict[str, Any]], deadline: float) -> None:
    """Each released rank's second frame: the sum its all_reduce of the judge's value gave (None if none came)."""
    for r, s in socks.items():
        try:
            head, _ = wire.unpack(bytes(wire.recv_frame(s, deadline)))
            out[r]["group_sum"] = head.get("group_sum")
        except (OSError, wire.WireError, wire.RecvDeadlinePassed, wire.PeerClosed):
            out[r]["group_sum"] = None


def _read_reports(socks: dict[int, socket.socket], timeout: float) -> tuple[dict[int, _Reader], bool]:
    """Each rank's report as far as it came, and whether time ran out.

    Reading stops at the deadline, or GRACE_SECONDS after the first rank
    failed (raised, or ended without a full report): its peers then get only
    that long to report before all are stopped.
    """
    readers = {r: _Reader() for r in socks}
    sel = selectors.DefaultSelector()
    for r, s in socks.items():
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, r)
    deadline = time.monotonic() + timeout
    failed_at: float | None = None
    pending = set(socks)
    while pending:
        now = time.monotonic()
        limit = deadline if failed_at is None else min(deadline, failed_at + GRACE_SECONDS)
        if now >= limit:
            break
        for key, _ in sel.select(limit - now):
            r = key.data
            try:
                chunk = socks[r].recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            reader = readers[r]
            if chunk:
                reader.buf += chunk
            else:
                reader.eof = True
            if reader.complete() or reader.eof:
                sel.unregister(socks[r])
                pending.discard(r)
                if reader.eof and not reader.complete():
                    failed_at = failed_at or time.monotonic()
                elif failed_at is None and _status_of(reader) != "ok":
                    failed_at = time.monotonic()
    sel.close()
    return readers, time.monotonic() >= deadline


def _entry(rank: int, reader: _Reader, timed_out: bool) -> dict[str, Any]:
    """One rank's line of the report: its status, value and error (untrusted: the judge checks the shape)."""
    entry: dict[str, Any] = {"rank": rank, "status": "", "value": None, "error": None, "group_alive": None,
                             "group_sum": None}
    if reader.complete():
        try:
            head, payload = wire.unpack(bytes(reader.buf))
        except wire.WireError as e:
            head, payload = {"status": "error", "error": {"message": f"malformed report ({e})"}}, None
        entry["status"] = str(head.get("status", "error"))
        entry["value"] = payload
        entry["error"] = head.get("error")
        entry["group_alive"] = head.get("group_alive")
        entry["group_sum"] = head.get("group_sum")
    elif reader.eof:
        entry["status"] = "exited"
    else:
        entry["status"] = "timeout" if timed_out else "stopped"
    return entry


def _wait_until(pid: int, end: float) -> str:
    while time.monotonic() < end:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return "ended"
        if done:
            return _describe_exit(status)
        time.sleep(0.005)
    return _kill_and_reap(pid)


def _status_of(reader: _Reader) -> str:
    try:
        head, _ = wire.unpack(bytes(reader.buf))
    except wire.WireError:
        return "error"
    return str(head.get("status", "error"))


def _plain_state(obj: Any) -> Any:
    """A module argument's state after the call, as plain tensors (what a public test can compare)."""
    import torch

    if isinstance(obj, torch.nn.Module):
        return {k: v.detach().clone() for k, v in obj.state_dict().items()}
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    return None


_ISFILE = os.path.isfile  # captured at import, before any student cell runs
_OPEN = open
_SLEEP = time.sleep
_NOW = time.monotonic


class Signals:
    """Flags one run's ranks raise and wait for: an order between ranks that the harness forces.

    A verdict must not depend on how the machine scheduled the ranks. Where a
    test's outcome would otherwise rest on a race in student code (a rank
    that reads a file rank 0 may or may not have written yet), the probe
    orders the ranks itself: rank 0 waits until the others have looked, or a
    reader waits until rank 0's save has returned. Each flag is an empty file
    in a folder made before the ranks fork; the functions used were captured
    when this module was imported. Nothing here is trusted (student code can
    raise a flag too): it only decides *when* a rank goes on, never a value
    the judge scores. Use as a context manager around ``run_ranks``: the
    folder goes when the run is over.
    """

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="signals-", dir=tempfile.gettempdir())

    def __enter__(self) -> Signals:
        return self

    def __exit__(self, *exc: object) -> None:
        for name in os.listdir(self.folder) if os.path.isdir(self.folder) else []:
            try:
                os.remove(os.path.join(self.folder, name))
            except OSError:
                pass
        try:
            os.rmdir(self.folder)
        except OSError:
            pass

    def _path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def set(self, name: str) -> None:
        """Raise the flag ``name``."""
        with _OPEN(self._path(name), "w"):
            pass

    def is_set(self, name: str) -> bool:
        return _ISFILE(self._path(name))

    def wait(self, names: list[str], timeout: float) -> bool:
        """Wait until every flag in ``names`` is raised (True) or ``timeout`` seconds have passed (False)."""
        end = _NOW() + timeout
        while not all(self.is_set(n) for n in names):
            if _NOW() >= end:
                return False
            _SLEEP(0.002)
        return True


def call_on_ranks(name: str, rank_args: list, *, timeout: float = TIMEOUT) -> dict[str, Any]:
    """Call the student's ``name(*rank_args[rank])`` on every rank of a fresh gloo group.

    For public tests, which cannot ship a probe: objects built in the sandbox
    beforehand (a model, its optimizer) are passed as handles and every rank
    gets its own copy of them (the ranks are forked). Each rank's value is
    ``{"value": what the function returned, "args": the state after the call of
    each module or tensor argument (None for others)}``.
    """
    import sys

    fn = getattr(sys.modules["__main__"], name, None)
    if fn is None:
        raise MissingName(name)

    def body(rank: int, world_size: int) -> Any:
        args = list(rank_args[rank])
        value = fn(*args)
        return {"value": value, "args": [_plain_state(a) for a in args]}

    return run_ranks(len(rank_args), body, timeout=timeout)
