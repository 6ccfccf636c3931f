"""The warm server and its sandboxes, below the judge."""

from __future__ import annotations

import os
import signal

import torch

from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer


def test_server_exits_by_itself_when_closed_and_ignores_ctrl_c():
    server = SandboxServer()
    os.kill(server.proc.pid, signal.SIGINT)  # as a terminal's or a kernel's interrupt would
    sb = Sandbox(server, SandboxConfig())
    assert sb.request("ping", timeout=10)[1] == "pong"
    sb.kill()
    server.close()
    # 0 means it left on its own when its socket closed; -9 would mean close() had to kill it
    assert server.proc.returncode == 0


def test_views_and_in_place_writes_cross_the_boundary(server):
    sb = Sandbox(server, SandboxConfig())
    try:
        sb.request("exec", "def bump(x):\n    x[0] += 1\n    return x[1:]\n", cell=1, timeout=10)
        _, fn = sb.request("getattr", target=None, name="bump", timeout=10)
        x = torch.zeros(4)
        _, out = sb.request("call", ([x], {}), target=fn.id, detailed=True, timeout=10)
        value, (after,) = out["value"], out["args"]
        assert after[0] == 1 and x[0] == 0  # the judge's own tensor is never touched
        assert value.untyped_storage().data_ptr() == after.untyped_storage().data_ptr()
    finally:
        sb.kill()


def test_student_code_runs_with_the_garbage_collector_on(server):
    """The server imports with the collector paused (autograder.gcpause); its sandboxes must not inherit that:
    a student's reference cycles are freed as in any Python process (and `del` plus `gc.collect()` works)."""
    sb = Sandbox(server, SandboxConfig())
    try:
        sb.request(
            "exec",
            "import gc, weakref\nclass Node:\n    pass\na, b = Node(), Node()\na.other, b.other = b, a\n"
            "probe = weakref.ref(a)\ndel a, b\nkeep = [[] for _ in range(5000)]\n"
            "STATE = [gc.isenabled(), probe() is None]",
            cell=1,
            timeout=30,
        )
        assert sb.request("getattr", target=None, name="STATE", timeout=10)[1] == [True, True]
    finally:
        sb.kill()


def test_each_sandbox_starts_clean(server):
    """State left by one submission is invisible to the next."""
    a = Sandbox(server, SandboxConfig())
    a.request("exec", "import torch\nLEFT = 1\nopen('/tmp/mark', 'w').write('x')\ntorch.manual_seed(3)", cell=1,
              timeout=10)
    a.kill()
    b = Sandbox(server, SandboxConfig())
    try:
        b.request("exec", "import os\nSEEN = ('LEFT' in globals(), os.path.exists('/tmp/mark'))", cell=1, timeout=10)
        assert b.request("getattr", target=None, name="SEEN", timeout=10)[1] == (False, False)
    finally:
        b.kill()


def test_no_sandbox_can_reach_a_grader_module_but_the_stub(server):
    """The grader's modules are listed once in the server; every sandbox still drops each of them."""
    for _ in range(3):  # the spare made ahead, and the ones after it
        sb = Sandbox(server, SandboxConfig())
        try:
            sb.request("exec", "import sys\nimport autograder\nLEFT = sorted(n for n in sys.modules if "
                       "n.startswith('autograder'))\nSTUB = autograder.IN_SANDBOX", cell=1, timeout=10)
            assert sb.request("getattr", target=None, name="LEFT", timeout=10)[1] == ["autograder"]
            assert sb.request("getattr", target=None, name="STUB", timeout=10)[1] is True
        finally:
            sb.kill()


def test_the_list_of_grader_modules_follows_every_import(monkeypatch):
    import sys
    import types

    from autograder.sandbox import runtime

    before = runtime.grader_modules()
    assert "autograder.sandbox.runtime" in before
    monkeypatch.setitem(sys.modules, "autograder._late_a", types.ModuleType("autograder._late_a"))
    assert "autograder._late_a" in runtime.grader_modules()
    # one removed and another added: the same count, another last name
    monkeypatch.delitem(sys.modules, "autograder._late_a")
    monkeypatch.setitem(sys.modules, "autograder._late_b", types.ModuleType("autograder._late_b"))
    listed = runtime.grader_modules()
    assert "autograder._late_b" in listed and "autograder._late_a" not in listed
    assert set(listed) == {n for n in sys.modules if n == "autograder" or n.startswith("autograder.")}


def test_isolation_probe_reports_the_kernels_refusal(monkeypatch):
    from autograder.sandbox import isolation, preflight

    clean = preflight.probe()  # this host allows namespaces (as root or via user namespaces) and mounts in them
    assert clean.refused is None and clean.unisolated is None

    def refuse(flags):
        raise isolation.IsolationError(1, "unshare: Operation not permitted")

    monkeypatch.setattr(isolation, "unshare", refuse)
    found = preflight.probe()
    assert found.unisolated and "Operation not permitted" in found.unisolated and found.refused is None


def test_read_only_paths_under_tmp_stay_visible(server, tmp_path):
    """A venv or checkout under /tmp (CI clones live there) must not vanish under the scratch tmpfs."""
    shown = tmp_path / "shown"
    shown.mkdir()
    (shown / "marker.txt").write_text("visible")
    os.chmod(tmp_path, 0o755)
    os.chmod(shown, 0o755)
    sb = Sandbox(server, SandboxConfig(extra_read_only=[str(shown)]))
    try:
        sb.request("exec", f"SEEN = open({str(shown / 'marker.txt')!r}).read()\n"
                   "import os\nWRITABLE = os.access('/tmp', os.W_OK)", cell=1, timeout=10)
        assert sb.request("getattr", target=None, name="SEEN", timeout=10)[1] == "visible"
        assert sb.request("getattr", target=None, name="WRITABLE", timeout=10)[1] is True
    finally:
        sb.kill()


def test_a_server_that_does_not_answer_a_spawn_is_stopped_not_trusted_again(monkeypatch):
    """A spawn's reply that comes too late would be read as the next one's: the server is killed, ServerFailed says so.

    (Before, the timed-out reader refused every later read with "cannot read from timed out object", and a warm
    worker graded every later submission 0, blaming the student's code.)
    """
    import pytest

    from autograder.sandbox import client
    from autograder.sandbox.client import ServerFailed

    s = SandboxServer(warm_compiler=False)
    try:
        s.wait_ready()
        monkeypatch.setattr(client, "START_TIMEOUT", 1.0)
        os.kill(s.proc.pid, signal.SIGSTOP)  # a server too busy to answer (a warm-up on an overloaded machine)
        with pytest.raises(ServerFailed, match="did not start a sandbox within 1 s"):
            Sandbox(s, SandboxConfig(isolate=False))
        assert s.proc.wait(10) is not None
        with pytest.raises(ServerFailed):
            Sandbox(s, SandboxConfig(isolate=False))
    finally:
        s.close()


def test_the_judge_reads_the_scratch_files_itself_whatever_the_sandbox_rebinds(server):
    """Issue 22: what a student's processes wrote is listed and read by the judge, through a descriptor the
    sandbox's init sent before any student code: rebinding os.listdir/open inside changes nothing, links are
    not followed, and sizes are bounded."""
    sb = Sandbox(server, SandboxConfig())
    try:
        assert sb.scratch_fd is not None
        sb.request("exec", "import os, builtins\nos.makedirs('out', exist_ok=True)\n"
                   "open('out/ckpt-rank0.pt', 'wb').write(b'rank0')\nopen('out/big.bin', 'wb').write(b'x' * 5000)\n"
                   "os.symlink('/etc/hostname', 'out/link.pt')\nos.mkfifo('out/fifo.pt')\n"
                   "os.listdir = lambda *a: ['ckpt-rank0.pt', 'ckpt-rank1.pt']\n"
                   "builtins.open = lambda *a, **k: (_ for _ in ()).throw(OSError('no'))\n", cell=1, timeout=10)
        got = sb.scratch_files("out", max_bytes=4096)
        assert got["files"] == {"ckpt-rank0.pt": b"rank0"}
        skipped = " | ".join(got["skipped"])
        assert "'big.bin': 5000 bytes, past" in skipped and "'link.pt': not a regular file" in skipped
        assert "'fifo.pt': not a regular file" in skipped
        assert sb.scratch_files("missing") == {"files": {}, "skipped": []}
        assert sb.scratch_files("../etc")["files"] == {} and sb.scratch_files("..")["files"] == {}
    finally:
        sb.kill()
    assert sb.scratch_fd is None  # closed with the sandbox: its tmpfs is not kept alive


def test_what_a_request_printed_is_in_the_output_as_soon_as_the_sandbox_is_killed(server):
    """Everything printed before the last reply is kept at a kill, not only what the output reader had
    reached by then: the end of a long output was lost now and then (4 kills in 30 before)."""
    for _ in range(30):
        sb = Sandbox(server, SandboxConfig())
        try:
            sb.request("exec", "print('x' * 50000, flush=True)\nprint('END', flush=True)\n", cell=1, timeout=30)
        finally:
            sb.kill()
        assert sb.output.rstrip().endswith("END")
        assert not sb.output_truncated
