"""Kernel-level isolation of one sandbox: namespaces, a private root, limits.

This is what bubblewrap does, done in-process with ctypes so that a forked
child of the warm server (torch already imported) can isolate itself without
an ``exec`` and the seconds of ``import torch`` that would cost.

Run as root, the sandbox gets fresh mount/PID/network/IPC/UTS namespaces and
then drops to a uid of its own (unique per sandbox, so process limits and
signals do not cross sandboxes). Run as an ordinary user, it first enters a
user namespace (mapping only its own uid) and drops every capability after the
mounts are made. Where the kernel refuses, it falls back to rlimits and a
process group, and says so in its protections report: the grader never claims
a protection it does not have.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import resource
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field

from autograder.errors import IsolationError, SetupRefused

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME = 32, 1024, 2048
MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 4096, 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 1, 38, 4

_SYSCALLS = {  # (pivot_root, capset)
    "x86_64": (155, 126),
    "aarch64": (41, 91),
}


# Which steps stop a sandbox for good (it never runs a cell) and which are reported in its header.
# The private root (and its own /proc) is what hides the hidden tests and the judge: without it
# no grade is given. Without seccomp or a cgroup the sandbox still runs, and the header says so.
FATAL_STEPS = ("private root", "/proc", "resource limits", "privileges")
REPORTED_STEPS = ("namespaces", "loopback", "cgroup", "seccomp")

TEST_REFUSE = "TORCHGRADER_TEST_REFUSE_STEP"  # tests: make the kernel's refusal of one step happen on any host


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    """Run one set-up step; a refusal becomes :class:`SetupRefused` naming it."""
    if os.environ.get(TEST_REFUSE) == name:
        raise SetupRefused(name, f"Operation not permitted (refused on purpose: {TEST_REFUSE}={name})", errno.EPERM)
    try:
        yield
    except SetupRefused:
        raise
    except OSError as e:
        raise SetupRefused(name, str(e) if isinstance(e, IsolationError) else f"{e.strerror or e}", e.errno or 0) from e


def container_engine() -> str | None:
    """"docker" or "podman" when this process runs in a container of that engine (their markers).

    Podman sets ``container=podman`` (and /run/.containerenv, though not with --read-only); Docker
    leaves /.dockerenv. The sandbox server keeps ``container`` in its environment for this.
    """
    if os.path.exists("/run/.containerenv") or os.environ.get("container") == "podman":  # noqa: SIM112 - its name
        return "podman"
    if os.path.exists("/.dockerenv"):
        return "docker"
    return None


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise IsolationError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), "prctl")


def drop_capabilities() -> None:
    """Clear every capability of this process (used inside a user namespace)."""
    _, capset_nr = _SYSCALLS.get(platform.machine(), (None, None))
    if capset_nr is None:
        raise IsolationError(errno.ENOSYS, "capset: unknown architecture")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    hdr = Header(0x20080522, 0)
    data = (Data * 2)()
    _check(_libc.syscall(capset_nr, ctypes.byref(hdr), ctypes.byref(data)), "capset")


def pivot_root(new_root: str, put_old: str) -> None:
    nr, _ = _SYSCALLS.get(platform.machine(), (None, None))
    if nr is None:
        raise IsolationError(errno.ENOSYS, "pivot_root: unknown architecture")
    _check(_libc.syscall(nr, new_root.encode(), put_old.encode()), "pivot_root")


@dataclass
class Limits:
    """Per-sandbox resource limits (the wall clock is enforced by the judge)."""

    memory_bytes: int = 6 * 2**30
    max_processes: int = 64
    max_file_bytes: int = 256 * 2**20
    max_open_files: int = 256
    scratch_bytes: int = 256 * 2**20
    cpu_seconds: int | None = None


@dataclass
class Plan:
    """What the sandbox may see of the host file system."""

    read_only: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)  # never visible, even through a parent
    root_dir: str = ""  # an empty host directory to build the private root on


def _statvfs_flags(path: str) -> int:
    f = os.statvfs(path).f_flag
    out = 0
    for st, ms in (
        (1, MS_RDONLY),
        (2, MS_NOSUID),
        (4, MS_NODEV),
        (8, MS_NOEXEC),
        (1024, MS_NOATIME),
        (2048, MS_NODIRATIME),
        (4096, MS_RELATIME),
    ):
        if f & st:
            out |= ms
    return out


def _bind(src: str, dst: str, read_only: bool = True) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            open(dst, "a").close()
    mount(src, dst, None, MS_BIND | MS_REC)
    if read_only:
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | _statvfs_flags(src)
        mount(None, dst, None, flags)


def host_paths_to_expose(plan: Plan) -> list[tuple[str, str]]:
    """Resolve the read-only allow-list into (host path, path inside) pairs.

    A path that is, or contains, a protected path is refused: exposing a parent
    of the hidden tests would expose the hidden tests.
    """
    protected = [os.path.realpath(p) for p in plan.protected]
    seen: list[str] = []
    out = []
    for p in plan.read_only:
        if not os.path.lexists(p):
            continue
        real = os.path.realpath(p)
        if real == "/" or any(_is_within(prot, real) for prot in protected):
            continue
        if any(_is_within(real, s) for s in seen):
            continue
        seen.append(real)
        out.append((p, real))
    return out


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def build_root(plan: Plan, limits: Limits, uid: int, gid: int) -> None:
    """Make a private root (tmpfs) with read-only system paths and a fresh /proc, then pivot into it.

    Raises :class:`SetupRefused` naming the step ("private root" or "/proc") the kernel refused.
    """
    with step("private root"):
        _populate_root(plan, limits, uid, gid)
    with step("/proc"):
        # The sandbox's own procfs (its PID namespace's processes only). Never a bind of the host's or
        # a container's /proc: that would show the judge's /proc/PID/cwd and environment.
        os.makedirs(plan.root_dir + "/proc")
        mount("proc", plan.root_dir + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    with step("private root"):
        _enter_root(plan.root_dir)


def _populate_root(plan: Plan, limits: Limits, uid: int, gid: int) -> None:
    root = plan.root_dir
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tgroot", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    # The scratch tmpfs goes first: a Python or a project installed under /tmp is then
    # bound inside it, instead of being hidden by a tmpfs mounted over it afterwards.
    os.makedirs(root + "/tmp")
    mount(
        "tgscratch",
        root + "/tmp",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"mode=0700,uid={uid},gid={gid},size={limits.scratch_bytes}",
    )
    for link in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(link):
            os.symlink(os.readlink(link), root + link)
    for _src, real in host_paths_to_expose(plan):
        target = root + real
        if os.path.lexists(target):
            continue
        _bind(real, target)
    # /dev: a few harmless nodes, a private /dev/shm (DataLoader workers need it)
    os.makedirs(root + "/dev", exist_ok=True)
    for node in ("null", "zero", "full", "random", "urandom"):
        _bind("/dev/" + node, root + "/dev/" + node, read_only=False)
    for node in sorted(os.listdir("/dev")):
        if node.startswith("nvidia"):
            _bind("/dev/" + node, root + "/dev/" + node, read_only=False)
    if os.path.isdir("/dev/nvidia-caps"):
        _bind("/dev/nvidia-caps", root + "/dev/nvidia-caps", read_only=False)
    os.makedirs(root + "/dev/shm")
    mount("tgshm", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={limits.scratch_bytes}")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    if any(n.startswith("nvidia") for n in os.listdir("/dev")) and os.path.isdir("/sys"):
        _bind("/sys", root + "/sys")


def _enter_root(root: str) -> None:
    os.makedirs(root + "/.old")
    pivot_root(root, root + "/.old")
    os.chdir("/")
    _check(_libc.umount2(b"/.old", MNT_DETACH), "umount old root")
    os.rmdir("/.old")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/tmp")


def set_limits(limits: Limits) -> None:
    def lim(kind: int, value: int) -> None:
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    lim(resource.RLIMIT_AS, limits.memory_bytes)
    lim(resource.RLIMIT_NPROC, limits.max_processes)
    lim(resource.RLIMIT_FSIZE, limits.max_file_bytes)
    lim(resource.RLIMIT_NOFILE, limits.max_open_files)
    lim(resource.RLIMIT_CORE, 0)
    if limits.cpu_seconds:
        lim(resource.RLIMIT_CPU, limits.cpu_seconds)


def enter_namespaces(want_userns: bool) -> dict[str, str]:
    """Unshare everything we can; returns what worked, by protection name.

    Must run in a single-threaded process (a fresh fork child). PID isolation
    applies to the *next* fork, which the caller makes.
    """
    report: dict[str, str] = {}
    uid, gid = os.getuid(), os.getgid()
    base = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    try:
        if want_userns:
            unshare(CLONE_NEWUSER | base)
            with open("/proc/self/setgroups", "w") as f:
                f.write("deny")
            with open("/proc/self/uid_map", "w") as f:
                f.write(f"{uid} {uid} 1")
            with open("/proc/self/gid_map", "w") as f:
                f.write(f"{gid} {gid} 1")
            report["user"] = "user namespace (own uid only, no capabilities)"
        else:
            unshare(base)
        report["namespaces"] = "ok"
        report["loopback"] = bring_up_loopback()
    except (IsolationError, OSError) as e:
        report["namespaces"] = f"unavailable ({e.strerror or e})"
    return report


def bring_up_loopback() -> str:
    """Set ``lo`` up in this (fresh) network namespace; "up" or why not.

    A new network namespace has only a loopback interface, and it is down.
    Multi-process student code (gloo ranks of ``torch.distributed``) talks
    over it; it reaches nothing but the namespace itself, so the host's
    loopback and every other network stay out of reach.
    """
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            req = struct.pack("16sH14x", b"lo", 0)
            flags = struct.unpack("16sH14x", fcntl.ioctl(s, siocgifflags, req))[1]
            fcntl.ioctl(s, siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))
        return "up"
    except OSError as e:
        return f"down ({e.strerror or e})"


def drop_privileges(root_mode: bool, uid: int, gid: int) -> None:
    """Leave root (or the user namespace's capabilities) for good."""
    if root_mode:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    else:
        drop_capabilities()
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
