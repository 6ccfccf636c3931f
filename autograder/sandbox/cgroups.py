"""A cgroup per sandbox: memory and process limits for the sandbox's whole process tree.

An rlimit is per process: six children of 1.1 GiB each pass a 6 GiB
``RLIMIT_AS``. A cgroup counts the whole tree (and what it writes to its
tmpfs). The trusted server makes one cgroup per sandbox before the sandbox
runs any student code, puts the sandbox's first process in it (every process
it starts inherits it), and removes it afterwards, killing anything left.

Both layouts are handled: cgroup v2 (``memory.max``, ``pids.max``,
``memory.oom.group``) and the v1 ``memory`` and ``pids`` controllers. Where
no cgroup can be made (an ordinary user without a delegated cgroup, a
read-only cgroupfs), :func:`open_cgroups` says why and the grader reports
the memory limit as per process.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field

MOUNTINFO = "/proc/self/mountinfo"
PROC_CGROUP = "/proc/self/cgroup"
PREFIX = "torchgrader-"


@dataclass
class Hierarchy:
    version: int  # 1 or 2
    mount: str  # where it is mounted
    own: str  # this process's cgroup, as a path under ``mount``
    controllers: set[str]


def _hierarchies() -> list[Hierarchy]:
    """The cgroup hierarchies mounted here, with this process's place in each."""
    own: dict[str, str] = {}
    try:
        with open(PROC_CGROUP) as f:
            for line in f:
                hid, names, path = line.rstrip("\n").split(":", 2)
                own["" if hid == "0" else names] = path
    except OSError:
        return []
    found = []
    try:
        with open(MOUNTINFO) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 5 or len(rparts) < 3:
            continue
        root, mount, fstype, opts = parts[3], parts[4], rparts[0], rparts[2].split(",")
        if fstype == "cgroup2" and "" in own:
            path = own[""]
            ctrls = set(_read(os.path.join(mount, "cgroup.controllers")).split())
            found.append(Hierarchy(2, mount, _relative(path, root), ctrls))
        elif fstype == "cgroup":
            ctrls = {o for o in opts if o in ("memory", "pids")}
            for key, path in own.items():
                if key and ctrls & set(key.split(",")):
                    found.append(Hierarchy(1, mount, _relative(path, root), ctrls))
                    break
    return found


def _relative(path: str, root: str) -> str:
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root) :] or "/"
    return path


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _counter(path: str, key: str) -> int:
    return _parse_counter(_read(path), key)


def _parse_counter(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


@dataclass
class SandboxCgroup:
    """The cgroup(s) of one sandbox: one directory on v2, one per controller on v1."""

    version: int
    dirs: list[str]
    memory_dir: str

    def add(self, pid: int) -> None:
        for d in self.dirs:
            _write(os.path.join(d, "cgroup.procs"), str(pid))

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs:
            out |= {int(p) for p in _read(os.path.join(d, "cgroup.procs")).split() if p.isdigit()}
        return out

    @property
    def oom_file(self) -> str:
        return os.path.join(self.memory_dir, "memory.events" if self.version == 2 else "memory.oom_control")

    def kill_all(self, wait: float = 2.0) -> None:
        """SIGKILL every process left in the cgroup (a daemon that escaped its process group)."""
        if self.version == 2 and os.path.exists(os.path.join(self.memory_dir, "cgroup.kill")):
            try:
                _write(os.path.join(self.memory_dir, "cgroup.kill"), "1")
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while True:
            left = self.pids()
            if not left or time.monotonic() > deadline:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)

    def remove(self) -> bool:
        ok = True
        for d in self.dirs:
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                ok = False
        return ok

    def report(self, limit_bytes: int, max_processes: int) -> str:
        kind = "cgroup v2" if self.version == 2 else "cgroup v1 memory controller"
        return (
            f"whole sandbox limited to {limit_bytes / 2**30:.1f} GiB ({kind}: every process it starts counts, "
            f"tmpfs files included), at most {max_processes} processes; each process's address space is "
            f"also limited to {limit_bytes / 2**30:.1f} GiB"
        )


@dataclass
class Cgroups:
    """Makes and removes the sandboxes' cgroups under one parent per server process."""

    version: int = 0
    parents: list[str] = field(default_factory=list)  # v2: [parent]; v1: [memory parent, pids parent?]
    reason: str = ""  # why there are none, when there are none
    _count: int = 0

    @property
    def available(self) -> bool:
        return bool(self.parents)

    def create(self, memory_bytes: int, max_processes: int) -> SandboxCgroup:
        """A fresh cgroup with the limits set; raises OSError when the kernel refuses."""
        self._count += 1
        name = f"sb-{self._count}"
        dirs = [os.path.join(p, name) for p in self.parents]
        made = []
        try:
            for d in dirs:
                os.mkdir(d, 0o755)
                made.append(d)
            cg = SandboxCgroup(self.version, dirs, dirs[0])
            if self.version == 2:
                d = dirs[0]
                _write(os.path.join(d, "memory.max"), str(memory_bytes))
                _try_write(os.path.join(d, "memory.swap.max"), "0")
                _try_write(os.path.join(d, "memory.oom.group"), "1")
                _write(os.path.join(d, "pids.max"), str(max_processes))
            else:
                _write(os.path.join(dirs[0], "memory.limit_in_bytes"), str(memory_bytes))
                _try_write(os.path.join(dirs[0], "memory.memsw.limit_in_bytes"), str(memory_bytes))
                if len(dirs) > 1:
                    _write(os.path.join(dirs[1], "pids.max"), str(max_processes))
            return cg
        except OSError:
            for d in made:
                _rmdir(d)
            raise

    def close(self) -> None:
        """Remove the parent cgroups (their sandboxes' cgroups must be gone already)."""
        for p in self.parents:
            _remove_with_children(p, kill_version=self.version)


def _try_write(path: str, value: str) -> None:
    try:
        _write(path, value)
    except OSError:
        pass


def _rmdir(path: str) -> None:
    """Remove an (empty) cgroup; one that still holds a process or is already gone stays as it is."""
    try:
        os.rmdir(path)
    except OSError:
        pass


def _remove_with_children(path: str, kill_version: int | None = None) -> None:
    """Remove a cgroup and the cgroups under it (a cgroupfs folder goes with rmdir only, never its files).

    With ``kill_version`` (the hierarchy's, 1 or 2), whatever still runs in a child is killed first.
    """
    for name in _children(path):
        child = os.path.join(path, name)
        if kill_version is not None:
            SandboxCgroup(kill_version, [child], child).kill_all(0.5)
        _rmdir(child)
    _rmdir(path)


def _children(path: str) -> list[str]:
    try:
        return [e.name for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _sweep_stale(base: str) -> None:
    """Remove empty cgroups a killed server of ours left behind (its pid is in the name)."""
    for name in _children(base):
        if not name.startswith(PREFIX) or not name[len(PREFIX) :].isdigit():
            continue
        pid = int(name[len(PREFIX) :])
        try:
            os.kill(pid, 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        _remove_with_children(os.path.join(base, name))


def _enable_v2(path: str) -> bool:
    want = {"memory", "pids"}
    have = set(_read(os.path.join(path, "cgroup.subtree_control")).split())
    if want <= have:
        return True
    try:
        _write(os.path.join(path, "cgroup.subtree_control"), " ".join(f"+{c}" for c in sorted(want - have)))
        return True
    except OSError:
        return False


def open_cgroups(tag: int | None = None) -> Cgroups:
    """The cgroup parent(s) for this server's sandboxes, or a Cgroups saying why there are none.

    v1 (a ``memory`` hierarchy) is used where the host mounts one; otherwise v2
    with the memory and pids controllers. The parent is made under this
    process's own cgroup (or, as root on v2, under the root when the own one
    holds processes and so cannot pass controllers down).
    """
    if os.environ.get("TORCHGRADER_NO_CGROUPS"):
        return Cgroups(reason="disabled by TORCHGRADER_NO_CGROUPS")
    tag = os.getpid() if tag is None else tag
    name = f"{PREFIX}{tag}"
    found = _hierarchies()
    v1 = {c: h for h in found if h.version == 1 for c in h.controllers}
    v2 = next((h for h in found if h.version == 2 and "memory" in h.controllers), None)
    errors = []
    if "memory" in v1:
        parents: list[str] = []
        for ctrl in ("memory", "pids"):
            h = v1.get(ctrl)
            if h is None:
                continue
            base = os.path.join(h.mount, h.own.lstrip("/"))
            _sweep_stale(base)
            p = os.path.join(base, name)
            try:
                os.makedirs(p, 0o755, exist_ok=True)
                parents.append(p)
            except OSError as e:
                if ctrl == "memory":
                    errors.append(f"cannot create a cgroup in {base}: {e.strerror}")
                    break
        else:
            return Cgroups(1, parents)
        for p in parents:
            try:
                os.rmdir(p)
            except OSError:
                pass
    elif v2 is not None:
        bases = [os.path.join(v2.mount, v2.own.lstrip("/"))]
        if os.geteuid() == 0 and v2.own != "/":
            bases.append(v2.mount)
        for base in bases:
            if "pids" not in set(_read(os.path.join(base, "cgroup.controllers")).split()) or not _enable_v2(base):
                errors.append(f"{base} cannot pass the memory and pids controllers to child cgroups")
                continue
            _sweep_stale(base)
            p = os.path.join(base, name)
            try:
                os.makedirs(p, 0o755, exist_ok=True)
            except OSError as e:
                errors.append(f"cannot create a cgroup in {base}: {e.strerror}")
                continue
            if _enable_v2(p):
                return Cgroups(2, [p])
            os.rmdir(p)
            errors.append(f"{p} cannot pass the memory and pids controllers to child cgroups")
    else:
        errors.append("no cgroup memory controller is mounted")
    return Cgroups(reason="; ".join(errors) or "no cgroup could be made")


def oom_kills(path: str) -> int:
    """The OOM-kill count in a cgroup's ``memory.events`` (v2) or ``memory.oom_control`` (v1)."""
    return _counter(path, "oom_kill")


# Usage this close to the limit, when a request's time runs out, means the sandbox stalled at its limit.
AT_LIMIT_SHARE = 0.9


def memory_in_use(oom_file: str) -> int | None:
    """Bytes a sandbox's cgroup holds now, read beside its OOM file; None when it cannot be read.

    The judge asks when a request's time has run out. The kernel does not always kill a process at the
    limit at once: it reclaims first (the page cache of files the code reads, again and again), and on a
    loaded host the processes can crawl at the limit until the test's time is up. Usage then sits at the
    limit, and a memory problem is what the student must hear about, not an infinite loop.
    """
    name = "memory.current" if os.path.basename(oom_file) == "memory.events" else "memory.usage_in_bytes"
    text = _read(os.path.join(os.path.dirname(oom_file), name)).strip()
    return int(text) if text.isdigit() else None


class PeakMemory:
    """The most memory a sandbox's cgroup held since :meth:`start`, measured by the kernel, outside the sandbox.

    A point may rest on it (issue 43): student code cannot lower a cgroup's counters. v1 keeps the peak in
    ``memory.max_usage_in_bytes`` (writing 0 resets it to the current usage); v2 in ``memory.peak``, which a
    write resets for the descriptor that wrote it (Linux 6.12 and later), so the file is kept open. Where the
    peak cannot be reset, :meth:`start` returns False and nothing is measured.
    """

    def __init__(self, oom_file: str) -> None:
        v2 = os.path.basename(oom_file) == "memory.events"
        folder = os.path.dirname(oom_file)
        self.current_file = os.path.join(folder, "memory.current" if v2 else "memory.usage_in_bytes")
        self._peak = os.path.join(folder, "memory.peak" if v2 else "memory.max_usage_in_bytes")
        self._fd: int | None = None
        self.before = 0  # bytes held when the measurement started

    def start(self) -> bool:
        try:
            self._fd = os.open(self._peak, os.O_RDWR | os.O_CLOEXEC)
            os.write(self._fd, b"0\n")
        except OSError:
            self.close()
            return False
        text = _read(self.current_file).strip()
        self.before = int(text) if text.isdigit() else 0
        return True

    def growth(self) -> int | None:
        """Peak bytes since :meth:`start` less what was held then; None when it cannot be read."""
        if self._fd is None:
            return None
        try:
            text = os.pread(self._fd, 64, 0).decode("ascii", "replace").strip()
        except OSError:
            return None
        finally:
            self.close()
        return max(0, int(text) - self.before) if text.isdigit() else None

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def set_memory_limit(oom_file: str, limit_bytes: int) -> bool:
    """Set the memory limit of the cgroup whose OOM file this is; False when the kernel refused.

    The judge narrows two live sandboxes of one submission so that together they stay within the one
    limit a sandbox has (``Session.enter_apart``). v1 keeps ``memory.memsw.limit_in_bytes`` at or above
    ``memory.limit_in_bytes``, so the two are written in the order that holds it (lower: the limit first).
    """
    folder = os.path.dirname(oom_file)
    value = str(int(limit_bytes))
    try:
        if os.path.basename(oom_file) == "memory.events":
            _write(os.path.join(folder, "memory.max"), value)
            return True
        limit = os.path.join(folder, "memory.limit_in_bytes")
        memsw = os.path.join(folder, "memory.memsw.limit_in_bytes")
        current = _read(limit).strip()
        lowering = current.isdigit() and int(current) > limit_bytes
        if lowering:
            _write(limit, value)
            _try_write(memsw, value)
        else:
            _try_write(memsw, value)
            _write(limit, value)
        return True
    except OSError:
        return False


class OomCounter:
    """:func:`oom_kills` of one sandbox's cgroup, its file kept open while the sandbox runs.

    The judge reads it after every reply (a child may have been killed for memory while the first
    process answered): some 700 times per correct submission. Kept open, each read is one
    ``pread`` instead of an open, a read and a close; the kernel writes the counter afresh at every
    read from offset 0. It is read once more as it is closed (the sandbox is killed), and that count is
    kept: the server may remove the cgroup, its file with it, before the judge asks why its sandbox died.
    After that it reads by path, so a kill counted later still shows, and no descriptor is left behind.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._closed = False
        self._last = 0  # the count read as the counter was closed

    def value(self) -> int:
        if self._closed:
            return max(self._last, oom_kills(self.path))
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return 0
        try:
            text = os.pread(self._fd, 4096, 0).decode("ascii", "replace")
        except OSError:  # the cgroup was removed (ENODEV): as a file that is gone
            return 0
        return _parse_counter(text, "oom_kill")

    def close(self) -> None:
        if self._closed:
            return
        self._last = self.value()
        self._closed = True
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def container_memory_gib() -> float | None:
    """The memory limit of the container this process runs in (its own cgroup's), or None when it has none."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        text = _read(path).strip()
        if not text:
            continue
        if text == "max" or not text.isdigit() or int(text) >= 2**60:  # v1 writes "unlimited" as about 2**63
            return None
        return int(text) / 2**30
    return None


def per_process_report(limit_bytes: int, reason: str) -> str:
    """The memory line of the protections report where the sandbox has no cgroup of its own."""
    from autograder.sandbox.isolation import container_engine

    sampled = "; a test that measures peak memory samples the sandbox's processes from /proc instead of a cgroup"
    each = f"each process's address space to {limit_bytes / 2**30:.1f} GiB (no cgroup per sandbox: {reason}){sampled}"
    container = os.environ.get("TORCHGRADER_CONTAINER_MEMORY")
    if container:  # the docker backend: the container's own cgroup bounds judge, server and sandbox together
        return (
            f"per container: this worker's container (judge, sandbox server and the sandbox) is limited to "
            f"{float(container):.1f} GiB by docker; inside it, {each}"
        )
    engine = container_engine()
    if engine:
        own = container_memory_gib()
        if own is not None:
            return (f"per container: the container's --memory ({own:.1f} GiB) bounds the judge and every sandbox "
                    f"together, not each sandbox; inside it, {each}")
        return (f"per process only, and the {engine} container itself has no memory limit (no --memory given, or "
                f"rootless Podman on cgroup v1, which ignores --memory): {each}; a sandbox that starts several "
                "processes can use a multiple of that")
    return (
        f"per process only: each process's address space is limited to {limit_bytes / 2**30:.1f} GiB, but a "
        f"sandbox that starts several processes can use a multiple of that (no cgroup: {reason}){sampled}"
    )
