"""A seccomp filter for the sandbox: the kernel interfaces most container escapes start from.

Installed in the sandbox's first process after its namespaces, root and
limits are in place and before the first student cell, it is inherited by
every process the student starts and cannot be removed. Blocked calls fail
with EPERM: new namespaces (``unshare``, ``setns``, namespace flags of
``clone``), mounting (``mount``, ``umount2``, ``pivot_root``, the new mount
API), ``ptrace`` and ``process_vm_readv/writev``, ``bpf``,
``perf_event_open``, ``userfaultfd``, kernel keyrings, module loading and
``kexec``, and io_uring (a ring runs dozens of operations that no filter
sees). ``clone3`` passes its flags in memory a filter cannot read, so it
answers ENOSYS: libc then falls back to ``clone``, whose flags are checked.
Two calls are checked by argument: ``personality`` may only query or set the
default persona (no ``READ_IMPLIES_EXEC``, no ``ADDR_NO_RANDOMIZE``), and
``socket``/``socketpair`` may only open AF_UNIX, AF_INET and AF_INET6
sockets, and netlink's NETLINK_ROUTE (gloo lists the interfaces of the
sandbox's own network namespace); any other family or netlink protocol,
AF_VSOCK and AF_PACKET included, answers EAFNOSUPPORT (vsock is not confined
by a network namespace).
Threads, ``fork``, DataLoader workers, ``torch.multiprocessing`` and
``torch.compile``'s compiler subprocesses are unaffected.

libseccomp is used through ctypes where it is installed; otherwise the small
BPF program is built here (x86_64 and aarch64, architecture checked in the
filter: any other ABI, x32 included, gets EPERM for every call).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import platform
import struct

from autograder.errors import FilterError

CLONE_NS_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_NS_MASK = sum(CLONE_NS_FLAGS.values())

DENIED = (
    "unshare", "setns", "mount", "umount2", "pivot_root",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev",
    "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)  # fmt: skip

# personality(2): the default persona (PER_LINUX) and the query; nothing else
PERSONALITY_ALLOWED = (0x00000000, 0xFFFFFFFF)
# socket(2) and socketpair(2): the families the sandbox needs (pipes to the judge, loopback for gloo's ranks),
# and netlink for NETLINK_ROUTE only: gloo lists the interfaces (getifaddrs), which sees the sandbox's own
# network namespace (its loopback) and nothing of the host's
SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10}
AF_NETLINK, NETLINK_ROUTE = 16, 0

# name -> (its number on x86_64, on aarch64): the generic table for aarch64
_NUMBERS = {
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442), "ptrace": (101, 117),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "bpf": (321, 280), "perf_event_open": (298, 241),
    "userfaultfd": (323, 282), "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106), "kexec_load": (246, 104),
    "kexec_file_load": (320, 294), "clone": (56, 220), "clone3": (435, 435), "seccomp": (317, 277),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "personality": (135, 92), "socket": (41, 198), "socketpair": (53, 199),
}  # fmt: skip
_ARCHES = ("x86_64", "aarch64")
SYSCALLS = {arch: {name: nrs[i] for name, nrs in _NUMBERS.items()} for i, arch in enumerate(_ARCHES)}
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1

# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_libc = ctypes.CDLL(None, use_errno=True)


def _load_libseccomp() -> ctypes.CDLL | None:
    """Loaded when this module is imported (in the server, before any sandbox's root is built)."""
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p,
    ]  # fmt: skip
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


_LIBSECCOMP = _load_libseccomp()


def errno_action(err: int) -> int:
    return RET_ERRNO | (err & 0xFFFF)


def _header(arch: str) -> list[tuple[int, int, int, int]]:
    """Check the architecture (another ABI, x32 included: EPERM for every call), then load the call's number."""
    eperm = errno_action(errno.EPERM)
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        (_RET_K, 0, 0, eperm),  # another ABI (i386 through int 0x80, arm32): nothing allowed
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch == "x86_64":
        prog += [(_JGE_K, 0, 1, X32_SYSCALL_BIT), (_RET_K, 0, 0, eperm)]
    return prog


def _one_of(values: list[int], refuse: int) -> list[tuple[int, int, int, int]]:
    """With args[0]'s low word loaded: allow when it is one of ``values``, else return ``refuse``."""
    prog = [(_JEQ_K, len(values) - i, 0, v) for i, v in enumerate(values)]
    return [*prog, (_RET_K, 0, 0, refuse), (_RET_K, 0, 0, RET_ALLOW)]


def _argument_checks(arch: str) -> list[tuple[int, int, int, int]]:
    """personality and socket/socketpair checked by their first argument (the call's number is loaded).

    The kernel reads both arguments as 32-bit ints, so the low word of args[0]
    is what counts (offset 16 of ``seccomp_data``: both tables are little-endian).
    """
    nrs = SYSCALLS[arch]
    persona = [(_LD_W_ABS, 0, 0, 16), *_one_of(list(PERSONALITY_ALLOWED), errno_action(errno.EPERM))]
    refuse = errno_action(errno.EAFNOSUPPORT)
    families = sorted(SOCKET_FAMILIES.values())
    family = [(_LD_W_ABS, 0, 0, 16)]  # args[0]: the family
    family += [(_JEQ_K, len(families) + 1 - i, 0, v) for i, v in enumerate(families)]  # to the allow below
    family += [
        (_JEQ_K, 2, 0, AF_NETLINK),
        (_RET_K, 0, 0, refuse),
        (_RET_K, 0, 0, RET_ALLOW),
        (_LD_W_ABS, 0, 0, 32),  # netlink: args[2], the protocol
        *_one_of([NETLINK_ROUTE], refuse),
    ]
    # jumps are forward only: each test skips to its block, past the blocks before it
    return [
        (_JEQ_K, 3, 0, nrs["personality"]),
        (_JEQ_K, 2 + len(persona), 0, nrs["socket"]),
        (_JEQ_K, 1 + len(persona), 0, nrs["socketpair"]),
        (_RET_K, 0, 0, RET_ALLOW),  # any other call
        *persona,
        *family,
    ]


def _pack(prog: list[tuple[int, int, int, int]]) -> bytes:
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


def build_argument_program(arch: str) -> bytes:
    """The argument checks alone (libseccomp compares each argument once per rule, so it cannot say "one of")."""
    return _pack([*_header(arch), *_argument_checks(arch)])


def build_program(arch: str) -> bytes:
    """The filter as a classic BPF program (an array of ``struct sock_filter``)."""
    nrs = SYSCALLS[arch]
    eperm, enosys = errno_action(errno.EPERM), errno_action(errno.ENOSYS)
    prog = _header(arch)
    prog += [(_JEQ_K, 0, 1, nrs["clone3"]), (_RET_K, 0, 0, enosys)]
    for name in DENIED:
        prog += [(_JEQ_K, 0, 1, nrs[name]), (_RET_K, 0, 0, eperm)]
    prog += [
        (_JEQ_K, 0, 4, nrs["clone"]),  # not clone: on to the argument checks
        (_LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0]: clone's flags (little-endian)
        (_JSET_K, 0, 1, CLONE_NS_MASK),
        (_RET_K, 0, 0, eperm),
        (_RET_K, 0, 0, RET_ALLOW),
    ]
    return _pack(prog + _argument_checks(arch))


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _set_no_new_privs() -> None:
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise FilterError(err, f"no_new_privs: {errno.errorcode.get(err, err)}")


def _load_program(arch: str, code: bytes) -> None:
    """Install one classic BPF program (all threads of this process, then every child)."""
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    _set_no_new_privs()
    rc = _libc.syscall(
        SYSCALLS[arch]["seccomp"], SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(fprog)
    )
    if rc != 0:
        err = ctypes.get_errno()
        raise FilterError(err, f"seccomp: {errno.errorcode.get(err, err)}")


def install_bpf(arch: str | None = None) -> None:
    """Install the hand-built program (all threads of this process, then every child)."""
    _load_all(bpf_programs(arch))


def bpf_programs(arch: str | None = None) -> list[bytes]:
    arch = arch or platform.machine()
    if arch not in SYSCALLS:
        raise FilterError(errno.ENOSYS, f"no syscall table for {arch}")
    return [build_program(arch)]


def _load_all(programs: list[bytes]) -> None:
    arch = platform.machine()
    for code in programs:
        _load_program(arch, code)


def install_libseccomp() -> None:
    """The same rules through libseccomp (which also knows the host's other ABIs)."""
    _load_all(libseccomp_programs())


def libseccomp_programs() -> list[bytes]:
    """libseccomp's program for the rules, then the argument checks ("one of these values"), which it
    cannot say: a second, stacked program (the kernel runs every filter and the strictest answer wins)."""
    lib = _LIBSECCOMP
    if lib is None:
        raise FilterError(errno.ENOENT, "libseccomp is not installed")
    arch = platform.machine()
    if arch not in SYSCALLS:
        raise FilterError(errno.ENOSYS, f"no syscall table for {arch} (personality and socket families unchecked)")
    ctx = lib.seccomp_init(RET_ALLOW)
    if not ctx:
        raise FilterError(errno.ENOMEM, "seccomp_init failed")
    try:
        eperm = errno_action(errno.EPERM)

        def rule(action: int, name: str, cmps: list[_ArgCmp] | None = None) -> None:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:  # unknown to this libseccomp (older than the call): nothing to block
                return
            arr = (_ArgCmp * len(cmps))(*cmps) if cmps else None
            rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps or []), arr)
            if rc < 0:
                raise FilterError(-rc, f"seccomp_rule_add {name}: {errno.errorcode.get(-rc, -rc)}")

        lib.seccomp_attr_set(ctx, 2, eperm)  # SCMP_FLTATR_ACT_BADARCH: other ABIs get EPERM
        for name in DENIED:
            rule(eperm, name)
        rule(errno_action(errno.ENOSYS), "clone3")
        for flag in CLONE_NS_FLAGS.values():  # SCMP_CMP_MASKED_EQ (7): (flags & flag) == flag
            rule(eperm, "clone", [_ArgCmp(0, 7, flag, flag)])
        code = _exported(lib, ctx)
    finally:
        lib.seccomp_release(ctx)
    return [code, build_argument_program(arch)]


def _exported(lib: ctypes.CDLL, ctx: int) -> bytes:
    """The classic BPF program libseccomp generated for ``ctx`` (what ``seccomp_load`` would install)."""
    r, w = os.pipe()
    try:
        rc = lib.seccomp_export_bpf(ctx, w)
        os.close(w)
        w = -1
        if rc < 0:
            raise FilterError(-rc, f"seccomp_export_bpf: {errno.errorcode.get(-rc, -rc)}")
        chunks = []
        while chunk := os.read(r, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    code = b"".join(chunks)
    if not code or len(code) % 8:
        raise FilterError(errno.EINVAL, f"seccomp_export_bpf wrote {len(code)} bytes, not a program")
    return code


@functools.cache
def prepared() -> tuple[tuple[str, list[bytes]], ...]:
    """The filter's programs, built once per process: the server calls it before it forks a sandbox.

    libseccomp's first, the hand-built program as the fallback. Building them took a sandbox 3 ms
    of its set-up; each sandbox now only loads them. Empty when neither could be built (install()
    then fails, and the sandbox reports that it is not filtered).
    """
    found = []
    for how, build in (("libseccomp", libseccomp_programs), ("BPF program", bpf_programs)):
        try:
            found.append((how, build()))
        except FilterError:
            continue
    return tuple(found)


def install() -> str:
    """Install the filter in this process; returns how (for the protections report)."""
    last: FilterError | None = None
    for how, programs in prepared():
        try:
            _load_all(programs)
            return how
        except FilterError as e:
            last = e
    if last is not None:
        raise last
    install_bpf()  # raises the reason neither program could be built
    return "BPF program"


def report(how: str) -> str:
    return (
        f"seccomp filter ({how}): new namespaces (unshare, setns, clone with namespace flags; clone3 answers "
        "ENOSYS so libc uses clone), mount/umount/pivot_root and the new mount API, ptrace, "
        "process_vm_readv/writev, bpf, perf_event_open, userfaultfd, io_uring, kernel keyrings, module loading "
        "and kexec fail with EPERM; personality only queries or sets the default persona; sockets only of the "
        f"families {', '.join(SOCKET_FAMILIES)} and netlink's NETLINK_ROUTE (AF_VSOCK, AF_PACKET, other netlink "
        "protocols and the rest: EAFNOSUPPORT)"
    )


BLOCKED_HINT = (
    " The grader does not allow this: its sandbox blocks system calls that create namespaces, mount file "
    "systems, trace other processes (ptrace), load kernel code, use io_uring, kernel keyrings, bpf or perf "
    "events, or change the process's personality; they fail with 'Operation not permitted'. Graded code must "
    "not need them."
)


def blocked_hint(etype: str, message: str) -> str:
    """The hint to add to a student's error when it is an EPERM the filter may have caused, else ""."""
    if etype in ("PermissionError", "OSError") and ("[Errno 1]" in message or "Operation not permitted" in message):
        return BLOCKED_HINT
    return ""
