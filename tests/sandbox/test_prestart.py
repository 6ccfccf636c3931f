"""The sandbox server ``torchgrader grade`` starts before it knows what it grades (sandbox/prestart.py).

What must hold, on the real server: a server started without the compiler learns from its owner's first
attach or fork whether to import torch._dynamo before its first sandbox; the batch grades with that very
server (one server per run, not two); and a server nothing adopts is closed, whatever ends the command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import cli
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from autograder.options import GradeOptions
from autograder.sandbox import client, prestart
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer
from tests.helpers import DEMO_COURSE, ROOT, preloaded

REF = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)


@pytest.fixture(autouse=True)
def _none_left_over():
    yield
    prestart.discard()


def test_a_server_started_without_the_compiler_learns_it_from_its_owners_first_attach():
    for told, dynamo in ((False, False), (True, True)):
        owner = SandboxServer(warm_compiler=False)
        try:
            owner.warm_compiler = told  # as warmup.start_server sets it on an adopted server
            judge = SandboxServer.attached(owner.connect_judge().detach())
            sb = Sandbox(judge, SandboxConfig())
            try:
                assert preloaded(sb) == (dynamo, False)
            finally:
                sb.kill()
                judge.close()
        finally:
            owner.close()


def test_the_backend_adopts_the_prestarted_server_and_tells_it_what_the_exercises_need():
    prestart.start()
    options = GradeOptions(exercises=["compile"])  # it compiles: the first sandbox needs torch._dynamo
    backend = ProcessBackend(WorkerConfig(course=str(ROOT), assignment="pytorch-fundamentals", options=options,
                                          allow_unisolated=True), 1)
    try:
        server = backend._shared_server()
        assert server is not None and prestart.take() is None  # adopted: no longer the command's to close
        assert server.warm_compiler
        judge = SandboxServer.attached(server.connect_judge().detach())
        sb = Sandbox(judge, SandboxConfig())
        try:
            assert preloaded(sb)[0]
        finally:
            sb.kill()
            judge.close()
    finally:
        backend.close()


def test_grading_from_the_command_uses_one_server_and_leaves_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    started: list[SandboxServer] = []
    real = client.SandboxServer.__init__

    def counted(self: SandboxServer, **kw: bool) -> None:
        real(self, **kw)
        started.append(self)

    monkeypatch.setattr(client.SandboxServer, "__init__", counted)
    servers_when_loading: list[int] = []
    load = cli.load_assignment

    def loading(*args: object, **kw: object) -> object:
        servers_when_loading.append(len(started))
        return load(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "load_assignment", loading)
    argv = ["grade", str(sub), "--assignment", "demo", "--course", str(DEMO_COURSE), "--out", str(tmp_path / "out"),
            "--allow-unisolated", "--progress", "plain"]
    assert cli.main(argv) == 0
    assert servers_when_loading == [1]  # started before the command read its assignment
    assert len(started) == 1  # the prestarted server graded: none was started besides it
    assert started[0].proc is not None and started[0].proc.returncode is not None  # closed with the batch
    assert "alice,alice,alice,4,2,6,6,graded" in (tmp_path / "out" / "gradebook.csv").read_text()

    # Nothing left to grade: the prestarted server is closed, not left importing
    assert cli.main(argv) == 0
    assert len(started) == 2 and started[1].proc is not None and started[1].proc.returncode is not None


def test_help_and_other_commands_start_no_server(monkeypatch: pytest.MonkeyPatch):
    started: list[object] = []
    monkeypatch.setattr(prestart, "start", lambda: started.append(1))
    with pytest.raises(SystemExit):
        cli.main(["grade", "--help"])
    with pytest.raises(SystemExit):
        cli.main(["check", "--help"])
    assert started == []
