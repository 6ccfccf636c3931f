"""One sandbox server answering several judges (a batch's local workers share one, see ProcessBackend)."""

from __future__ import annotations

import os
import time

import pytest

from autograder.errors import ServerFailed
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer
from tests.helpers import preloaded

CONFIG = SandboxConfig()


def _judge(owner: SandboxServer) -> SandboxServer:
    return SandboxServer.attached(owner.connect_judge().detach())


def _descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (keepers, inits, their children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.add(c)
            todo.append(c)
    return found


def _until(check, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_two_judges_share_one_server_each_with_its_own_sandboxes():
    owner = SandboxServer(warm_compiler=False)
    a, b = _judge(owner), _judge(owner)
    try:
        sa, sb = Sandbox(a, CONFIG), Sandbox(b, CONFIG)
        sa.request("exec", "who = 'a'\n", cell=1, timeout=30)
        sb.request("exec", "who = 'b'\n", cell=1, timeout=30)
        assert sa.request("getattr", target=None, name="who", timeout=30)[1] == "a"
        assert sb.request("getattr", target=None, name="who", timeout=30)[1] == "b"
        assert a.pid == b.pid == owner.proc.pid  # one server process answered both
        assert sa.pid != sb.pid
        sa.kill()
        sb.kill()
    finally:
        a.close()
        b.close()
        owner.close()
    assert owner.proc.returncode == 0  # it left by itself once every connection was closed


def test_a_judge_that_goes_away_takes_its_sandboxes_with_it_and_the_others_go_on():
    """A worker killed mid-test (its job's time is up) leaves no sandbox running on the shared server: each
    sandbox's keeper kills it when its judge's connection hangs up, spare included."""
    owner = SandboxServer(warm_compiler=False)
    a, b = _judge(owner), _judge(owner)
    try:
        doomed = Sandbox(a, CONFIG)
        doomed.request("exec", "import time\n", cell=1, timeout=30)
        kept = Sandbox(b, CONFIG)
        a.close()  # the judge is gone; its sandbox's control socket is still open here
        assert _until(lambda: not os.path.exists(f"/proc/{doomed.pid}")), "the sandbox outlived its judge"
        assert kept.request("ping", timeout=30)[1] == "pong"
        again = Sandbox(b, CONFIG)  # the server still forks sandboxes for the judge that is left
        assert again.request("ping", timeout=30)[1] == "pong"
        again.kill()
        kept.kill()
        doomed.kill()
    finally:
        b.close()
        owner.close()
    assert owner.proc.returncode == 0


def test_a_warm_up_for_one_judge_is_told_to_the_others_not_read_as_their_reply():
    """The server warms up between two requests of another judge; that judge's next reply comes after a notice
    line, which it skips (and it allows the reply the warm-up's time)."""
    owner = SandboxServer(warm_compiler=False)
    a, b = _judge(owner), _judge(owner)
    try:
        b.wait_ready()
        a.warm_later(only=[])  # a warm-up of nothing: still announced to b
        sb = Sandbox(b, CONFIG)
        assert sb.request("ping", timeout=30)[1] == "pong"
        sb.kill()
    finally:
        a.close()
        b.close()
        owner.close()


def test_only_the_owner_connects_judges():
    owner = SandboxServer(warm_compiler=False)
    judge = _judge(owner)
    try:
        with pytest.raises(ServerFailed, match="only the process that started the sandbox server"):
            judge.connect_judge()
    finally:
        judge.close()
        owner.close()


def test_a_worker_reads_its_connection_once_from_the_environment(monkeypatch):
    owner = SandboxServer(warm_compiler=False)
    fd = owner.connect_judge().detach()
    try:
        monkeypatch.setenv("TORCHGRADER_SANDBOX_SERVER_FD", str(fd))
        judge = SandboxServer.from_environment()
        assert judge is not None and judge.proc is None
        assert "TORCHGRADER_SANDBOX_SERVER_FD" not in os.environ  # a process it starts never inherits it
        sb = Sandbox(judge, CONFIG)
        assert sb.request("ping", timeout=30)[1] == "pong"
        sb.kill()
        judge.close()
        monkeypatch.setenv("TORCHGRADER_SANDBOX_SERVER_FD", "0")  # not a socket: the worker starts its own
        assert SandboxServer.from_environment() is None
    finally:
        owner.close()
    assert _until(lambda: not _descendants(owner.proc.pid))


def test_a_shared_server_that_does_not_answer_is_given_up_by_that_judge_only(monkeypatch):
    """A judge whose spawn is not answered in time closes its connection (a late reply would be read as the
    next one's) and says so; its next spawn says the server is gone. The owner's server is not killed."""
    import signal

    from autograder.sandbox import client

    owner = SandboxServer(warm_compiler=False)
    judge = _judge(owner)
    try:
        judge.wait_ready()
        monkeypatch.setattr(client, "START_TIMEOUT", 1.0)
        os.kill(owner.proc.pid, signal.SIGSTOP)
        try:
            with pytest.raises(ServerFailed, match="did not start a sandbox within 1 s"):
                Sandbox(judge, CONFIG)
        finally:
            os.kill(owner.proc.pid, signal.SIGCONT)
        with pytest.raises(ServerFailed, match="stopped answering this judge"):
            Sandbox(judge, CONFIG)
        assert owner.proc.poll() is None  # only this judge gave the server up
        again = _judge(owner)
        sb = Sandbox(again, CONFIG)
        assert sb.request("ping", timeout=30)[1] == "pong"
        sb.kill()
        again.close()
    finally:
        owner.close()


def test_a_batch_server_warms_up_between_its_judges_requests_without_being_asked():
    """The owner of a batch's server knows its workers will each grade more than one submission: attached so,
    the server warms up at once, in steps, and serves a spawn between two steps rather than after all of them.
    Its first step imports torch._dynamo, the second scikit-learn: a sandbox asked for right away comes from a
    server with some of the warm-up done or none, never all of it; a later one inherits all of it. No judge
    ever sends a warm-up request here."""
    owner = SandboxServer(warm_compiler=False)
    judge = SandboxServer.attached(owner.connect_judge(warm_up=True).detach())
    try:
        judge.wait_ready()
        first = Sandbox(judge, CONFIG)
        try:
            assert preloaded(first)[1] is False, "the spawn waited for the whole warm-up"
        finally:
            first.kill()

        def warm() -> bool:
            sb = Sandbox(judge, CONFIG)
            try:
                return preloaded(sb) == (True, True)
            finally:
                sb.kill()

        assert _until(warm, 120), "the warm-up never reached later sandboxes"
    finally:
        judge.close()
        owner.close()


def test_a_server_attached_without_the_warm_up_never_warms_up_by_itself():
    owner = SandboxServer(warm_compiler=False)
    judge = _judge(owner)
    try:
        Sandbox(judge, CONFIG).kill()
        time.sleep(3)  # longer than both imports take here: a warm-up, had one started, would be seen
        sb = Sandbox(judge, CONFIG)
        try:
            assert preloaded(sb) == (False, False)
        finally:
            sb.kill()
    finally:
        judge.close()
        owner.close()
