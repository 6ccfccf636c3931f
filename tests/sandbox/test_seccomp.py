"""The sandbox's seccomp filter: escape-prone kernel interfaces fail with EPERM, torch keeps working."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform

import pytest

from autograder.sandbox import seccomp
from autograder.sandbox.client import Sandbox, SandboxConfig, StudentException

ARCH_OK = pytest.mark.skipif(platform.machine() not in seccomp.SYSCALLS, reason=f"no table for {platform.machine()}")


def _probe_in_child(install: str) -> dict:
    """Install the filter in a forked child, try each call there, and report the errnos."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        out: dict = {}
        try:
            os.close(r)
            getattr(seccomp, install)()
            libc = ctypes.CDLL(None, use_errno=True)
            nrs = seccomp.SYSCALLS[platform.machine()]

            def err(rc: int) -> int:
                return 0 if rc >= 0 else ctypes.get_errno()

            out["unshare"] = err(libc.unshare(seccomp.CLONE_NS_FLAGS["CLONE_NEWUSER"]))
            out["setns"] = err(libc.setns(0, 0))
            out["mount"] = err(libc.mount(b"none", b"/nonexistent", b"tmpfs", 0, None))
            out["umount2"] = err(libc.umount2(b"/nonexistent", 0))
            out["ptrace"] = err(libc.ptrace(0, 0, 0, 0))
            for name in (
                "bpf",
                "perf_event_open",
                "userfaultfd",
                "keyctl",
                "add_key",
                "init_module",
                "kexec_load",
                "process_vm_readv",
                "pivot_root",
                "fsopen",
            ):
                out[name] = err(libc.syscall(nrs[name], 0, 0, 0, 0, 0))
            out["clone3"] = err(libc.syscall(nrs["clone3"], 0, 0))
            for flag, value in seccomp.CLONE_NS_FLAGS.items():
                rc = libc.syscall(nrs["clone"], value | 17, 0, 0, 0, 0)
                if rc == 0:
                    os._exit(0)
                out[flag] = err(rc)
            child = os.fork()
            if child == 0:
                os._exit(7)
            out["fork"] = os.waitpid(child, 0)[1] >> 8
            import subprocess
            import threading

            t = threading.Thread(target=lambda: None)
            t.start()
            t.join()
            out["exec"] = subprocess.run(["true"]).returncode
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out["error"] = repr(e)
        finally:
            os.write(w, json.dumps(out).encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@ARCH_OK
@pytest.mark.parametrize("install", ["install_bpf", "install_libseccomp"])
def test_the_filter_blocks_each_listed_call_and_allows_fork_threads_and_exec(install):
    if install == "install_libseccomp" and seccomp._LIBSECCOMP is None:
        pytest.skip("libseccomp is not installed here (the BPF program is tested instead)")
    got = _probe_in_child(install)
    assert "error" not in got, got
    blocked = {k: v for k, v in got.items() if k not in ("clone3", "fork", "exec")}
    assert blocked == dict.fromkeys(blocked, errno.EPERM), blocked
    assert got["clone3"] == errno.ENOSYS
    assert got["fork"] == 7 and got["exec"] == 0


def test_the_bpf_program_checks_the_architecture_first():
    prog = seccomp.build_program("x86_64")
    assert len(prog) % 8 == 0 and len(prog) // 8 < 255
    import struct

    first = [struct.unpack("HBBI", prog[i : i + 8]) for i in range(0, 24, 8)]
    assert first[0] == (0x20, 0, 0, 4) and first[1][3] == seccomp.AUDIT_ARCH["x86_64"]
    assert first[2] == (0x06, 0, 0, seccomp.errno_action(errno.EPERM))


CODE = r"""
import ctypes, math, os, torch
import torch.multiprocessing as tmp
from torch.utils.data import DataLoader, TensorDataset
libc = ctypes.CDLL(None, use_errno=True)

def nested_namespace():
    if libc.unshare(0x10000000 | 0x20000) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))

def loader():
    ds = TensorDataset(torch.arange(40.0).reshape(20, 2))
    return [b[0].sum().item() for b in DataLoader(ds, batch_size=4, num_workers=2)]

def _put(q, done):
    q.put(torch.ones(3) * 7)
    done.wait(20)

def mp_fork():
    ctx = tmp.get_context("fork")
    q, done = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_put, args=(q, done))
    p.start()
    t = q.get(timeout=20)
    done.set()
    p.join()
    return t.tolist(), p.exitcode

def mp_spawn():
    p = tmp.get_context("spawn").Process(target=math.factorial, args=(5,))
    p.start()
    p.join(60)
    return p.exitcode

def compiled(backend):
    f = torch.compile(lambda x: torch.sin(x) * 2 + 1, backend=backend)
    return f(torch.zeros(8)).tolist()
"""


def test_in_the_sandbox_the_filter_is_reported_blocks_namespaces_and_torch_keeps_working(server):
    sb = Sandbox(server, SandboxConfig())
    try:
        assert sb.protections["syscalls"].startswith("seccomp filter"), sb.protections
        sb.request("exec", CODE, cell=1, timeout=30)

        def call(name, *args, timeout=60):
            return sb.request("call", (list(args), {}), target=None, name=name, timeout=timeout)[1]

        with pytest.raises(StudentException) as e:
            call("nested_namespace")
        assert e.value.error["type"] == "PermissionError" and "[Errno 1]" in e.value.error["message"]
        assert call("loader") == [28.0, 92.0, 156.0, 220.0, 284.0]  # DataLoader workers (num_workers=2)
        assert call("mp_fork") == ([7.0, 7.0, 7.0], 0)  # tensors through shared memory
        assert call("mp_spawn") == 0  # a fresh interpreter (exec)
        assert call("compiled", "aot_eager") == [1.0] * 8
        assert call("compiled", "inductor", timeout=300) == [1.0] * 8  # C++ compiler subprocesses
    finally:
        sb.kill()
