"""The warm server: imports torch once, then forks one isolated sandbox per request.

It runs in its own freshly exec'd process, so it holds no hidden material and
no judge state; it never runs student code itself and never runs a parallel
torch op (forking after one hangs GNU OpenMP in the child). A request carries
two file descriptors (SCM_RIGHTS): the sandbox's end of its control socket and
the write end of its output pipe, so the judge talks to each sandbox directly.

Process tree per sandbox: server -> keeper (enters the namespaces) -> init
(PID 1 of a fresh PID namespace, runs the student's code). Killing init kills
every process the student started; the keeper reaps it and exits.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autograder import gcpause
from autograder.sandbox import compiler, hugepages, seccomp, zygote
from autograder.sandbox.cgroups import Cgroups, SandboxCgroup, open_cgroups, per_process_report

if TYPE_CHECKING:
    from autograder.sandbox.isolation import Limits

# torch.fx.experimental.symbolic_shapes (with sympy): torch.autograd.grad imports it whenever it is given
# grad_outputs, a fifth of a second in every sandbox whose probes or student code do that.
PRELOAD = (
    "torch", "torch.nn", "torch.nn.functional", "torch.utils.data", "torch.optim", "numpy",
    "torch.fx.experimental.symbolic_shapes",
)
# Imported when the judge asks ({"op": "warm"}: as a second submission arrives, or once a notebook's first
# check is done), or between requests from the start for a batch's or a service's workers (an attach with
# "warm", see serve), for every later sandbox. torch._dynamo: torch.optim imports it at an optimizer's first
# step (about a second in every sandbox that trains); scikit-learn: only for students' own cells
# (noisy_digits reads its digits), no check needs it. One submission graded from cold never waits for them.
LATER_PRELOAD = ("torch._dynamo", "sklearn.datasets")
# Before the first sandbox of a server asked to warm the compiler (the selected exercises compile or train:
# `--warm-compiler`, or "compiler" in its owner's first attach or fork, see serve): a compile exercise's probes
# import it before the first student cell. Once the server is ready, not before: the judges attached or forked
# meanwhile collect their suites while it imports.
COMPILER_PRELOAD = ("torch._dynamo",)
UID_BASE = 200_000
FOLD_CHUNK = 32 << 20  # bytes of heap folded into huge pages per step of a warm-up between requests


class _Stop(BaseException):
    """The judge closed the server while it was still importing (see :func:`_stop_importing`)."""


_STOPPABLE = False  # True while the server only imports: nothing to clean up yet, no sandbox being forked
# A judge's close arrived while the server imported: from then on, any failure of an import is the close's.
# The signal lands wherever the import is: inside an extension module's initialisation (numpy's), the _Stop
# comes back as an ImportError ("cannot load module more than once per process"), or a library swallows it
# and goes on. Either way the server leaves without a word.
_STOP_ASKED = False
_IMPORTING = ""  # the module _import_all is importing: the one named when the preload fails (_say_cannot_start)


def _stop_importing(signum: int, frame: Any) -> None:
    """SIGUSR1 from a judge that closes the server: stop importing what no sandbox will use now.

    Without it a judge that is done (one exercise checked, one submission graded)
    would wait for the imports after the first sandbox (scikit-learn, the
    compiler warm-up) before the server could exit; outside the imports the
    signal is ignored, so it never interrupts a fork or the clean-up.
    """
    global _STOP_ASKED
    if _STOPPABLE:
        _STOP_ASKED = True
        raise _Stop


def _preload() -> None:
    """What every sandbox needs, before the server says it is ready (COMPILER_PRELOAD comes after, see serve)."""
    _import_all(PRELOAD, required=True)
    import autograder.sandbox.runtime  # noqa: F401 - warm import for the children


def _preload_later(warm_compiler: bool = False, only: Any = None) -> bool:
    """What only some sandboxes use, when the judge asks: inherited by every sandbox forked after it.

    ``only``: the modules of LATER_PRELOAD wanted (a notebook's checks know theirs), without the
    compiler warm-up; None: all of them and the warm-up. True when anything new was imported.
    """
    before = len(sys.modules)
    for step in _warm_steps(warm_compiler, only):
        step()
    return len(sys.modules) != before


def _warm_steps(warm_compiler: bool = False, only: Any = None) -> list[Callable[[], None]]:
    """:func:`_preload_later` as steps of a second or two each, for a warm-up between requests (see serve)."""
    names = LATER_PRELOAD if only is None else tuple(n for n in LATER_PRELOAD if n in only)
    steps: list[Callable[[], None]] = [functools.partial(_stoppable, _import_all, (name,)) for name in names]
    if warm_compiler and only is None:
        steps += [functools.partial(_stoppable, _warm_compiler, how) for how in WARM_COMPILES]
        steps.append(functools.partial(_stoppable, _warm_training))
    return steps


def _stoppable(fn: Callable[..., None], *args: Any) -> None:
    """One step of a warm-up: a judge's close stops it (SIGUSR1), and the collector waits meanwhile."""
    global _STOPPABLE
    _STOPPABLE = True
    try:
        with gcpause.paused():
            fn(*args)
    except BaseException:
        if not _STOP_ASKED:
            raise
    finally:
        _STOPPABLE = False
    if _STOP_ASKED:  # the close: raised, converted by a library, or swallowed by one that went on
        raise _Stop


def _import_all(names: tuple[str, ...], required: bool = False) -> None:
    import importlib

    global _IMPORTING
    for name in names:
        _IMPORTING = name
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - optional: a missing package only costs import time later
            if _STOP_ASKED:  # the close, converted by the module: import nothing more
                raise _Stop from None
            if required:
                raise
    _IMPORTING = ""
    compiler.skip_guard_profiling()  # once torch._dynamo is in, before any sandbox inherits it


# The warm-up's compiles, each a step of its own: a tiny module compiled the ways the course's probes and
# students' cells compile. Dynamo alone; AOTAutograd with dynamic shapes, with gradients (a student's cell) and
# in inference (as the compile exercise's probes run it), called again at another size under
# ``fail_on_recompile``; a backend of one's own (a probe counts graphs with one). Each path has first-use work
# of its own (lazy imports, caches filled at a first call); inherited, a sandbox does only its share.
WARM_COMPILES = (
    {"backend": "eager", "fullgraph": True},
    {"backend": "aot_eager", "dynamic": True},
    {"backend": "own", "fullgraph": True, "inference": True},
    {"backend": "aot_eager", "dynamic": True, "inference": True},
)


def _own_backend(gm: Any, example_inputs: Any) -> Callable[..., Any]:
    return gm.forward


def _warm_compiler(how: dict[str, Any]) -> None:
    """Run one tiny torch.compile so every later sandbox inherits dynamo's warmed-up state.

    A first compile in a fresh process costs 1 to 3 s of lazy imports and
    cache set-up; done once here, each sandbox's first compile takes a tenth
    of that. Safe to fork afterwards: the server runs with OMP_NUM_THREADS=1
    (no OpenMP pool to break in the child) and never touches CUDA.
    """
    try:
        _compile_tiny(how)
    except Exception:  # noqa: BLE001 - an optimisation only; sandboxes compile cold instead
        pass


def _compile_tiny(how: dict[str, Any]) -> None:
    """:func:`_warm_compiler`'s work, raising what goes wrong (the tests run it so)."""
    _import_all(COMPILER_PRELOAD)
    import torch
    from torch._dynamo.comptime import comptime

    torch.set_num_threads(1)

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            comptime(lambda ctx: None)  # as a probe counts traces: runs only while dynamo traces
            return self.fc2(torch.relu(self.fc1(x)).clamp(max=6.0))

    backend = _own_backend if how["backend"] == "own" else how["backend"]
    options = {k: how[k] for k in ("fullgraph", "dynamic") if k in how}
    with _generators_kept(), (torch.no_grad() if how.get("inference") else contextlib.nullcontext()):
        compiled = torch.compile(Tiny(), backend=backend, **options)
        compiled(torch.randn(3, 4))
        if how.get("dynamic"):
            with torch.compiler.set_stance("fail_on_recompile"):
                compiled(torch.randn(5, 4))
    torch._dynamo.reset()


def _warm_training() -> None:
    """Train a tiny model the ways the course's probes do, once, for every later sandbox to inherit.

    An optimizer's first step, a scheduler's, autocast's and a GradScaler's first use, and a checkpoint's
    first save and ``weights_only`` load each do work only once per process; done here, no sandbox that
    trains or resumes repeats it. On the CPU, on one thread, as :func:`_warm_compiler`.
    """
    try:
        _train_tiny()
    except Exception:  # noqa: BLE001 - an optimisation only; each sandbox's first step pays instead
        pass


def _train_tiny() -> None:
    """:func:`_warm_training`'s work, raising what goes wrong (the tests run it so)."""
    import io

    import torch
    from torch import nn

    torch.set_num_threads(1)
    with _generators_kept():
        for kind in ("adamw", "sgd", "adam"):
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))
            sched: Any = None
            opt: torch.optim.Optimizer
            if kind == "adamw":
                opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
                sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
            elif kind == "sgd":
                opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
                sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.9**epoch)
            else:
                opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            data = torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,)))
            loader = torch.utils.data.DataLoader(data, batch_size=4, shuffle=True,
                                                 generator=torch.Generator().manual_seed(0))
            scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8)
            for xb, yb in loader:
                opt.zero_grad()
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = nn.functional.cross_entropy(model(xb), yb)
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(opt)
                scaler.update()
            if sched is not None:
                sched.step()
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                        "sched": sched.state_dict() if sched is not None else None}, buf)
            buf.seek(0)
            saved = torch.load(buf, weights_only=True)
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["opt"])
            if sched is not None:
                sched.load_state_dict(saved["sched"])


def _generators_kept() -> contextlib.AbstractContextManager[None]:
    """Leave torch's default generator as the warm-up found it: a sandbox starts from the same state either way.

    The CPU's only (``devices=[]``): the server never touches CUDA.
    """
    import torch

    return torch.random.fork_rng(devices=[])


def default_read_only() -> list[str]:
    """System and Python paths a sandbox needs to run torch; nothing else."""
    import autograder

    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc", "/opt/conda"]
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        paths.append(p)
        paths.append(os.path.realpath(p))
    paths.append(os.path.dirname(os.path.realpath(sys.executable)))
    for p in sys.path:
        if p and ("site-packages" in p or "dist-packages" in p) and os.path.isdir(p):
            paths.append(p)
    paths.append(os.path.dirname(os.path.abspath(autograder.__file__)))
    return paths


@dataclass
class _Keeping:
    """What the keeper decided before forking init: which protections it got, and as whom init runs."""

    ns: dict[str, str]
    isolated: bool
    is_root: bool
    uid: int
    gid: int
    limits: Limits
    scratch: str | None  # without a private tmpfs: a folder the keeper removes afterwards


def _keeper(req: dict, wait_sock: socket.socket, report_w: int, root_dir: str, judge_fd: int) -> None:
    """Runs in the forked keeper process; never returns.

    The sandbox is made ready *before* it is needed: namespaces, private root,
    limits and dropped privileges are all in place while init waits on
    ``wait_sock`` for its control socket and output pipe (sent by the server
    when a judge asks for a sandbox). Once init runs, the keeper kills it when
    the judge it was made for goes away (``judge_fd``: the server's end of that
    judge's connection): a shared server outlives a worker killed mid-test.
    """
    from autograder.sandbox import isolation as iso

    iso.die_with_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    k = _enter_namespaces(req)
    pid = os.fork()
    if pid == 0:
        try:
            _init_process(req, k, wait_sock, root_dir)
        except BaseException:  # noqa: BLE001 - report and die; the judge sees the closed socket
            try:
                os.write(2, traceback.format_exc().encode()[-4000:])
            finally:
                os._exit(70)
        os._exit(0)
    os.write(report_w, struct.pack("!q", pid))
    os.close(report_w)
    wait_sock.close()
    _reap(pid, judge_fd)
    if k.scratch is not None:
        import shutil

        shutil.rmtree(k.scratch, ignore_errors=True)
    os._exit(0)


def _enter_namespaces(req: dict) -> _Keeping:
    """The keeper's own step: new namespaces (unless configured off), init's uid, and a scratch folder without them."""
    from autograder.sandbox import isolation as iso

    is_root = os.geteuid() == 0
    ns = {"namespaces": "disabled by configuration"}
    if req.get("isolate", True):
        ns = iso.enter_namespaces(want_userns=not is_root)
    isolated = ns.get("namespaces") == "ok"
    uid = UID_BASE + os.getpid() if is_root else os.getuid()
    gid = uid if is_root else os.getgid()
    scratch = None
    if not isolated:  # no private tmpfs: a scratch folder the keeper removes afterwards
        scratch = tempfile.mkdtemp(prefix="torchgrader-scratch-")
        if is_root:
            os.chown(scratch, uid, gid)
    return _Keeping(ns, isolated, is_root, uid, gid, iso.Limits(**req.get("limits", {})), scratch)


def _init_process(req: dict, k: _Keeping, wait_sock: socket.socket, root_dir: str) -> None:
    """Init (PID 1 of the sandbox): lock itself in, wait for its descriptors, then serve the judge.

    A set-up step the kernel refuses ends this sandbox before any student code, and its
    step, the kernel's words and the traceback go to the judge in place of "ready": a sandbox
    that cannot start is never mistaken for a student's crash (client.SandboxCannotStart).
    """
    from autograder.sandbox import isolation as iso

    iso.die_with_parent()
    os.setsid()
    _quiet_stdio()
    failure: dict[str, Any] | None = None
    protections: dict[str, str] = {}
    try:
        protections = _confine_filesystem(req, k, root_dir)
        with iso.step("resource limits"):
            iso.set_limits(k.limits)
        with iso.step("privileges"):
            protections["privileges"] = _drop_privileges(k)
            # The server replaces this with the real scope (a cgroup for the whole sandbox, or per process).
            protections["memory"] = f"address space of each process limited to {k.limits.memory_bytes / 2**30:.1f} GiB"
            iso.prctl(iso.PR_SET_DUMPABLE, 0)
        protections["syscalls"] = _filter_syscalls()
    except BaseException as e:  # noqa: BLE001 - whatever stopped the set-up, the judge is told
        step, reason = (e.step, e.reason) if isinstance(e, iso.SetupRefused) else ("sandbox set-up", repr(e))
        failure = {"kind": "setup", "step": step, "message": reason, "traceback": traceback.format_exc()[-4000:]}
    fds = _await_descriptors(wait_sock)
    if fds is None:
        os._exit(0)  # the server went away before this sandbox was used
    ctrl_fd, out_fd = fds
    if failure is not None:
        _report_failure(ctrl_fd, failure)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    _init_main(ctrl_fd, protections, req)


def _report_failure(ctrl_fd: int, failure: dict[str, Any]) -> None:
    """Answer the judge's wait for "ready" with why this sandbox could not start, then end it."""
    from autograder.sandbox import wire

    try:
        wire.send_frame(socket.socket(fileno=ctrl_fd), wire.pack({"id": "ready", "ok": False, "error": failure}))
    finally:
        os._exit(70)


def _quiet_stdio() -> None:
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


def _confine_filesystem(req: dict, k: _Keeping, root_dir: str) -> dict[str, str]:
    """The private root (isolated) or the scratch folder (not); what each protects, for the report."""
    from autograder.sandbox import isolation as iso

    limits = k.limits
    if k.isolated:
        plan = iso.Plan(read_only=req["read_only"], protected=req.get("protected", []), root_dir=root_dir)
        iso.build_root(plan, limits, k.uid, k.gid)  # raises SetupRefused naming the step
        lo = "loopback only" if k.ns.get("loopback") == "up" else f"loopback {k.ns.get('loopback', 'down')}"
        return {
            "network": f"isolated (own network namespace, {lo}: nothing else reachable)",
            "filesystem": (
                "private root: system and Python paths read-only, scratch /tmp "
                f"({limits.scratch_bytes // 2**20} MiB tmpfs) writable, nothing else visible"
            ),
            "processes": f"own PID namespace, at most {limits.max_processes} processes, whole tree killed at the end",
        }
    assert k.scratch is not None
    os.chdir(k.scratch)
    why = k.ns.get("namespaces", "")
    return {
        "network": f"NOT isolated: namespaces {why}",
        "filesystem": f"NOT isolated: the student's code can read what this user can ({why})",
        "processes": (
            f"process group only (a child that calls setsid can escape the kill); "
            f"at most {limits.max_processes} processes"
        ),
    }


def _drop_privileges(k: _Keeping) -> str:
    """Init's own uid and no new privileges; how, for the report."""
    from autograder.sandbox import isolation as iso

    if k.is_root:
        iso.drop_privileges(True, k.uid, k.gid)
        return f"runs as unprivileged uid {k.uid}, no capabilities"
    if k.isolated:
        iso.drop_privileges(False, k.uid, k.gid)
        return k.ns.get("user", "user namespace") + ", no new privileges"
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)
    return "runs as the grading user (no user namespace)"


def _filter_syscalls() -> str:
    """The seccomp filter: the last step of the set-up, before the first student cell (every child inherits it)."""
    try:
        return seccomp.report(seccomp.install())
    except OSError as e:
        return f"NOT filtered: the kernel refused the seccomp filter ({e})"


def _await_descriptors(wait_sock: socket.socket) -> tuple[int, int] | None:
    """Close every other descriptor, then wait for the judge's control socket and output pipe (None: never sent)."""
    wait_fd = wait_sock.fileno()
    for fd in _open_fds():
        if fd not in (0, 1, 2, wait_fd):
            try:
                os.close(fd)
            except OSError:
                pass
    _, fds, _, _ = socket.recv_fds(wait_sock, 16, 2)
    wait_sock.close()
    if len(fds) != 2:
        return None
    return fds[0], fds[1]


def _reap(pid: int, judge_fd: int) -> None:
    """Wait for init to exit (the keeper's only work once init is running); kill it if its judge goes first.

    Only a hang-up of the judge's connection counts (its requests are the server's to read). Without
    pidfds (Linux before 5.3) the keeper only waits, and init ends with the server as before.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    if pidfd >= 0:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.register(judge_fd, select.POLLRDHUP)
        while True:
            try:
                events = dict(poller.poll())
            except InterruptedError:
                continue
            if pidfd in events:
                break
            if events.get(judge_fd, 0) & (select.POLLHUP | select.POLLRDHUP | select.POLLERR | select.POLLNVAL):
                try:
                    os.kill(pid, signal.SIGKILL)  # still our unreaped child: the pid cannot have been reused
                except ProcessLookupError:
                    pass
                break
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _open_fds() -> list[int]:
    try:
        return [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


def _init_main(ctrl_fd: int, protections: dict[str, str], req: dict) -> None:
    import torch

    from autograder.sandbox import runtime, wire

    torch.set_num_threads(int(req.get("threads", 1)))
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # the server's own use of it (_stop_importing) ends here
    sock = socket.socket(fileno=ctrl_fd)
    os.environ.clear()
    os.environ.update({"HOME": "/tmp", "PATH": "/usr/bin:/bin", "TMPDIR": "/tmp", "LANG": "C.UTF-8"})
    # The scratch folder (the private /tmp, or the unisolated scratch) as a descriptor for the judge, sent
    # before any student code: what the ranks wrote is then listed and read by the judge itself.
    scratch = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        socket.send_fds(sock, [wire.SCRATCH_MARK], [scratch])
    finally:
        os.close(scratch)
    wire.send_frame(sock, wire.pack({"id": "ready", "ok": True, "protections": protections, "pid": os.getpid()}))
    runtime.Runtime(sock).serve()


class Spare:
    """An isolated sandbox made ready ahead of time, waiting for its file descriptors.

    Its cgroup (where the host has one) is made here, on the trusted side,
    before the fork; its first process is put in it before any student code
    can run, so every process the sandbox starts is counted with it.
    """

    def __init__(self, key: str, req: dict, root_dir: str, groups: Cgroups, judge_fd: int) -> None:
        from autograder.sandbox.isolation import Limits

        self.key = key
        limits = Limits(**req.get("limits", {}))  # what the judge asked for; Limits' own defaults for the rest
        memory = limits.memory_bytes
        self.cgroup: SandboxCgroup | None = None
        why = groups.reason
        if groups.available:
            try:
                self.cgroup = groups.create(memory, limits.max_processes)
            except OSError as e:
                why = f"the kernel refused a cgroup ({e.strerror})"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        report_r, report_w = os.pipe()
        from autograder.sandbox import runtime  # imported by _preload (it imports torch)

        runtime.grader_modules()  # listed here, again only after an import: every sandbox inherits the list
        seccomp.prepared()  # built once here; each sandbox only loads it
        keeper = os.fork()
        if keeper == 0:
            try:
                ours.close()
                os.close(report_r)
                _keeper(req, theirs, report_w, root_dir, judge_fd)
            finally:
                os._exit(71)
        theirs.close()
        os.close(report_w)
        data = b""
        while len(data) < 8:
            chunk = os.read(report_r, 8 - len(data))
            if not chunk:
                break
            data += chunk
        os.close(report_r)
        self.sock = ours
        self.pid = struct.unpack("!q", data)[0] if len(data) == 8 else None
        if self.cgroup is not None and self.pid is not None:
            try:
                self.cgroup.add(self.pid)  # init waits for its descriptors: no student code has run yet
            except OSError as e:
                why = f"the sandbox could not be put in its cgroup ({e.strerror})"
                self.cgroup.remove()
                self.cgroup = None
        if self.cgroup is not None:
            self.memory = self.cgroup.report(memory, limits.max_processes)
        else:
            self.memory = per_process_report(memory, why)

    def handed_over(self) -> dict[str, Any]:
        """What the judge learns from the trusted side: the memory limit's real scope, where OOM kills show."""
        info: dict[str, Any] = {"memory": self.memory}
        if self.cgroup is not None:
            info["oom_file"] = self.cgroup.oom_file
        return info

    def hand_over(self, fds: list[int]) -> bool:
        try:
            socket.send_fds(self.sock, [b"go"], fds)
            return True
        except OSError:
            return False
        finally:
            self.sock.close()

    def discard(self) -> None:
        self.sock.close()  # init sees EOF and exits; the keeper follows


class Reaper:
    """Removes each used sandbox's cgroup once its first process is gone, killing what is left.

    The judge kills a sandbox's first process (PID 1 of its namespace: the
    kernel then kills the rest); anything still in the cgroup afterwards (a
    daemon of a sandbox without a PID namespace) is killed here.
    """

    def __init__(self) -> None:
        self.used: list[tuple[SandboxCgroup, int]] = []

    def add(self, cgroup: SandboxCgroup | None, pid: int | None) -> None:
        if cgroup is not None:
            self.used.append((cgroup, pid or 0))

    def sweep(self, final: bool = False) -> None:
        keep = []
        for cg, pid in self.used:
            if final or pid not in cg.pids():
                cg.kill_all()
                if cg.remove():
                    continue
            keep.append((cg, pid))
        self.used = keep


def _key(req: dict) -> str:
    return json.dumps(
        {k: req.get(k) for k in ("limits", "protected", "isolate", "threads", "extra_read_only")}, sort_keys=True
    )


def _root_mount_point() -> tuple[str, bool]:
    """An empty directory to mount each sandbox's private root on; (path, remove when done).

    Every sandbox mounts over it inside its own mount namespace, so one fixed
    directory per user serves all servers at once and nothing piles up in /tmp
    when a server is killed. A path someone else planted (not a plain directory
    of ours, mode 700) is never used.
    """
    path = os.path.join(tempfile.gettempdir(), f"torchgrader-root-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix="torchgrader-root-"), True
    st = os.lstat(path)
    import stat

    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700:
        return path, False
    return tempfile.mkdtemp(prefix="torchgrader-root-"), True


class _Spares:
    """One judge's spare sandbox (its key and request); used sandboxes go to the server's one reaper."""

    def __init__(self, root_dir: str, groups: Cgroups, reaper: Reaper, judge_fd: int) -> None:
        self.root_dir = root_dir
        self.groups = groups
        self.reaper = reaper
        self.judge_fd = judge_fd
        self.spare: Spare | None = None
        self.last: tuple[str, dict] | None = None  # the last spawn's key and request, for a spare after a warm-up

    def hand_over(self, req: dict, fds: list[int]) -> dict[str, Any]:
        """Give the judge a sandbox made for ``req`` (the spare, if it was made for the same); the reply to send."""
        key = _key(req)
        self.reaper.sweep()
        if self.spare is None or self.spare.key != key or self.spare.pid is None:
            self.discard()
            self.spare = Spare(key, req, self.root_dir, self.groups, self.judge_fd)
        spare, self.spare = self.spare, None
        ok = spare.pid is not None and spare.hand_over(fds)
        self.reaper.add(spare.cgroup, spare.pid)
        self.last = (key, req)
        if not ok:
            return {"ok": False, "error": "the sandbox could not start"}
        return {"ok": True, "pid": spare.pid, **spare.handed_over()}

    def prepare_next(self) -> None:
        """A spare like the last one handed over, made once the judge has its reply (it works meanwhile)."""
        if self.spare is None and self.last is not None:
            self.spare = Spare(*self.last, self.root_dir, self.groups, self.judge_fd)

    def renew(self) -> None:
        """After a warm-up: the spare forked before it is replaced by one that inherits it."""
        if self.spare is not None and self.last is not None:
            self.discard()
            self.spare = Spare(*self.last, self.root_dir, self.groups, self.judge_fd)

    def discard(self) -> None:
        if self.spare is not None:
            self.spare.discard()
            self.reaper.add(self.spare.cgroup, self.spare.pid)
            self.spare = None


WARMING_NOTICE = {"notice": "warming"}  # sent to the other judges before a warm-up: their next reply may be late


class _Judges:
    """The connections a server answers: its first judge's, and those added by ``{"op": "attach"}``.

    A batch's local workers share one server (see ``ProcessBackend``): its owner attaches one
    connection per worker, and each judge's requests are answered on its own connection, one
    at a time. Every connection is a trusted process's: only a judge, or the process that
    started the server, ever holds one (a sandbox's init closes every descriptor it inherits).
    """

    def __init__(self, first: socket.socket, root_dir: str, groups: Cgroups) -> None:
        self.root_dir = root_dir
        self.groups = groups
        self.reaper = Reaper()
        self.open: dict[socket.socket, _Spares] = {}
        self.add(first)

    def add(self, sock: socket.socket) -> None:
        self.open[sock] = _Spares(self.root_dir, self.groups, self.reaper, sock.fileno())

    def drop(self, sock: socket.socket) -> None:
        spares = self.open.pop(sock, None)
        if spares is not None:
            spares.discard()
        sock.close()

    def send(self, sock: socket.socket, reply: dict[str, Any]) -> bool:
        """A reply on one connection; a judge that has gone is dropped (the others go on)."""
        try:
            sock.sendall(json.dumps(reply).encode() + b"\n")
            return True
        except OSError:
            self.drop(sock)
            return False

    def tell_others(self, sock: socket.socket, notice: dict[str, Any]) -> None:
        for other in list(self.open):
            if other is not sock:
                self.send(other, notice)

    def close(self) -> None:
        for sock in list(self.open):
            self.drop(sock)
        self.reaper.sweep(final=True)


def _readable(socks: list[socket.socket], *, block: bool = True) -> list[socket.socket]:
    """The connections with a request (or a hang-up) waiting; poll, not select: any descriptor number.

    ``block=False``: none is also an answer (the server has a warm-up step to do meanwhile).
    """
    poller = select.poll()
    by_fd = {s.fileno(): s for s in socks}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    while True:
        try:
            return [by_fd[fd] for fd, _ in poller.poll(None if block else 0)]
        except InterruptedError:
            continue


def _import_compiler(judges: _Judges) -> None:
    """COMPILER_PRELOAD, before a sandbox needs it; a spare forked before it is replaced by one that has it."""
    _stoppable(_import_all, COMPILER_PRELOAD)
    for spares in judges.open.values():
        spares.renew()


def _after_warm_up(judges: _Judges, modules_before: int) -> None:
    """Once a warm-up imported anything: fold the heap, and replace the spares forked before it.

    Only a server that will fork many sandboxes is warmed up: folding its heap costs 0.05 to 3.5 s
    once (the VM's memory decides), and saves some 55 ms of CPU at each later fork.
    """
    for step in _fold_steps(judges, modules_before):
        step()


def _fold_steps(judges: _Judges, modules_before: int) -> list[Callable[[], None]]:
    """:func:`_after_warm_up` as steps, one chunk of the heap each (see hugepages.chunks): a warm-up between
    requests folds between them too, so that a judge's spawn waits for one chunk, never for the whole fold."""
    if len(sys.modules) == modules_before:
        return []
    def fold(lo: int, hi: int) -> None:
        hugepages.collapse_range(lo, hi)

    steps: list[Callable[[], None]] = [functools.partial(fold, lo, hi) for lo, hi in hugepages.chunks(FOLD_CHUNK)]

    def renew() -> None:
        for spares in judges.open.values():
            spares.renew()

    return [*steps, renew]


def serve(sock: socket.socket, warm_compiler: bool = False) -> None:
    """Answer the judges' requests until every connection is closed.

    ``{"op": "spawn"}`` with two descriptors hands over a sandbox. ``{"op": "warm"}``
    (answered at once) imports what only some sandboxes use and, with
    ``warm_compiler``, warms the compiler up; the spare sandboxes forked before it are
    replaced, so every later sandbox inherits it. A judge asks as a second submission
    arrives: a single submission never waits for it, a batch's later ones start warm.
    ``{"op": "warm", "only": [...]}`` imports only those modules of LATER_PRELOAD (a
    notebook's later checks). ``{"op": "attach"}`` with one descriptor adds a judge's
    connection, told "ready" on it (the owner of a shared server sends nothing else, and
    reads nothing: it never waits for the server). ``{"op": "judge"}`` with four (a worker's
    stdin, stdout and stderr, and a status pipe) forks a batch's worker from this server
    with a new connection of its own (sandbox/zygote.py), and is an attach for the rest.
    An attach with ``"warm": "between
    requests"`` (a batch whose workers will each grade more than one submission) starts the
    whole warm-up at once, in steps of a second or two done only while no judge waits: the
    workers' first submissions grade meanwhile, and no spawn waits for more than one step.

    With ``warm_compiler``, or once an attach or a fork says ``"compiler": true`` (its owner's:
    a server started before its owner knew what it grades, see sandbox/prestart.py), COMPILER_PRELOAD
    is imported before the first sandbox: as soon as no request waits, or when a spawn asks. An
    attach or a fork waiting when the server becomes ready is answered first, so that judge
    collects its suites while the server imports.
    """
    warmed = False
    folded = False  # the warm-up between requests has folded the heap (or had nothing new to fold)
    root_dir, remove_root = _root_mount_point()
    read_only = default_read_only()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    groups = open_cgroups()
    judges = _Judges(sock, root_dir, groups)
    background: list[Callable[[], None]] = []  # a warm-up's steps left, each done while no judge waits
    modules_before = 0
    compiler = [functools.partial(_import_compiler, judges)] if warm_compiler else []  # while still to do

    def want_compiler() -> None:
        nonlocal warm_compiler
        if not warm_compiler:
            warm_compiler = True
            compiler.append(functools.partial(_import_compiler, judges))

    def import_compiler() -> None:
        while compiler:
            compiler.pop()()

    try:
        while judges.open:
            ready = _readable(list(judges.open), block=not (compiler or background))
            if not ready:
                try:
                    if compiler:
                        import_compiler()
                        continue
                    background.pop(0)()
                    if not background and not folded:
                        folded = True  # the heap is folded in steps too, then the spares are renewed
                        background = _fold_steps(judges, modules_before)
                except _Stop:
                    return
                continue
            for conn in ready:
                if conn not in judges.open:
                    continue
                try:
                    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 4)
                except OSError:
                    judges.drop(conn)
                    continue
                if not msg:
                    for fd in fds:
                        os.close(fd)
                    judges.drop(conn)
                    continue
                head, _, rest = msg.partition(b"\n")
                req: dict[str, Any] = json.loads(head)
                op = req.get("op")
                if op == "spawn" and len(fds) == 2:
                    try:
                        import_compiler()  # the first sandbox of a server that warms the compiler waits for it
                    except _Stop:
                        return
                    req["read_only"] = read_only + list(req.get("extra_read_only", []))
                    spares = judges.open[conn]
                    reply = spares.hand_over(req, fds)
                    for fd in fds:
                        os.close(fd)
                    if judges.send(conn, reply):
                        spares.prepare_next()
                    continue
                if (op == "attach" and len(fds) == 1) or (op == "judge" and len(fds) == 4):
                    if req.get("compiler") is True:
                        want_compiler()
                    if op == "judge":  # a worker forked from here, with its own connection (sandbox/zygote.py)
                        settings = zygote.read_settings(conn, req, rest)
                        if settings is None:
                            for fd in fds:
                                os.close(fd)
                            judges.drop(conn)
                            continue
                        judge, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                        zygote.fork_worker(settings, theirs.detach(), list(fds))
                    else:
                        judge = socket.socket(fileno=fds[0])
                    judges.add(judge)
                    judges.send(judge, {"ok": True, "ready": True, "pid": os.getpid()})
                    if req.get("warm") == "between requests" and not warmed:
                        warmed = True  # the owner knows a batch's workers will grade more than one each
                        background, modules_before = _warm_steps(warm_compiler), len(sys.modules)
                    continue
                for fd in fds:
                    os.close(fd)
                if not judges.send(conn, {"ok": op in ("ping", "warm"), "pid": os.getpid()}):
                    continue
                if op == "warm" and not warmed:
                    only = req.get("only")
                    warmed = only is None  # the whole warm-up happens once; a partial one may be followed by more
                    judges.tell_others(conn, WARMING_NOTICE)
                    before = len(sys.modules)
                    try:
                        _preload_later(warm_compiler, only if isinstance(only, list) else None)
                        _after_warm_up(judges, before)
                    except _Stop:
                        return
    finally:
        judges.close()
        groups.close()
        if remove_root:
            try:
                os.rmdir(root_dir)
            except OSError:
                pass


def _say_cannot_start(sock: socket.socket, exc: BaseException) -> None:
    """The server's first line when torch or the preload cannot be imported: what failed, in one line.

    The owner raises it as ServerFailed (client._wait_ready_locked), and the command says it as
    the sandbox that cannot start; a traceback on the terminal would say nothing more to a TA.
    """
    said = f"importing {_IMPORTING or 'the preload'} failed: {type(exc).__name__}: {exc}"[:500]
    with contextlib.suppress(OSError):
        sock.sendall(json.dumps({"ok": False, "error": said}).encode() + b"\n")


def main() -> None:
    # Ctrl-C in a terminal or a Jupyter kernel's interrupt reaches the whole process group;
    # the server ends when its judge closes the socket, never halfway through a fork.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, _stop_importing)
    fd = int(sys.argv[1])
    sock = socket.socket(fileno=fd)
    warm_compiler = "--warm-compiler" in sys.argv[2:]
    global _STOPPABLE
    _STOPPABLE = True
    gcpause.pause()
    try:
        _preload()
    except BaseException as exc:  # noqa: BLE001 - the owner says it to the user; no traceback reaches them
        if not _STOP_ASKED:
            _say_cannot_start(sock, exc)
            os._exit(70)
    if _STOP_ASKED:  # the close: raised, converted by a library, or swallowed by one that went on
        os._exit(0)
    _STOPPABLE = False
    gcpause.resume()
    sock.sendall(json.dumps({"ok": True, "ready": True, "pid": os.getpid()}).encode() + b"\n")
    serve(sock, warm_compiler=warm_compiler)
    # Nothing to flush; skipping interpreter shutdown (torch's atexit work) saves seconds.
    os._exit(0)


if __name__ == "__main__":
    main()
