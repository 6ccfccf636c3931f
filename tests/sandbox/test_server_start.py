"""How the sandbox server's start can end: ready, closed while it imports, or unable to import torch.

The server's stderr is the command's, so whatever it prints reaches the TA. A close that lands inside an
extension module's initialisation (numpy's, as a real CI run met it) comes back from the import as an
ImportError, or is swallowed by a library that tries the import again: either way the server leaves
quietly. A preload that truly fails is said in one line the owner raises as ServerFailed, never as a
traceback. The server runs here for real (its own process, its socket); only its preload list is
replaced by a module of the test's, so that the signal lands inside an import every time.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.errors import ServerFailed
from autograder.sandbox.client import SandboxServer
from tests.helpers import ROOT

# Inside the import: the server's own close (SIGUSR1, as SandboxServer.close sends it), then what a library
# does with the exception that interrupts it.
CLOSED_INSIDE = """
import os, signal, time
try:
    os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(30)
except BaseException as exc:
    {then}
"""
CONVERTED = "raise ImportError('cannot load module more than once per process') from exc"
SWALLOWED = "pass  # as `try: import numpy except ...: HAS_NUMPY = False` does"


def _server(tmp_path: Path, module_text: str) -> tuple[subprocess.Popen, socket.socket]:
    (tmp_path / "tg_preload_probe.py").write_text(module_text)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from autograder.sandbox import server
        server.PRELOAD = ("tg_preload_probe",)
        sys.argv = ["server", {str(theirs.fileno())!r}]
        server.main()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    theirs.close()
    return proc, ours


@pytest.mark.parametrize("then", [CONVERTED, SWALLOWED], ids=["converted to ImportError", "swallowed"])
def test_a_close_that_lands_inside_an_import_ends_the_server_without_a_word(tmp_path: Path, then: str):
    proc, ours = _server(tmp_path, CLOSED_INSIDE.format(then=then))
    out, err = proc.communicate(timeout=60)
    ours.settimeout(5)
    assert ours.recv(1 << 16) == b""  # no "ready": nothing will be graded with it
    assert proc.returncode == 0
    assert err == "" and out == ""


def test_a_preload_that_cannot_be_imported_is_said_in_one_line_the_owner_raises(tmp_path: Path):
    proc, ours = _server(tmp_path, "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in err and err == ""
    owner = SandboxServer.attached(ours.detach())
    with pytest.raises(ServerFailed) as failed:
        owner.wait_ready()
    said = str(failed.value)
    assert "could not start" in said and "tg_preload_probe" in said and "libtorch_cpu.so" in said
    owner.close()


def test_the_first_line_of_a_server_that_could_not_start_is_plain_json(tmp_path: Path):
    proc, ours = _server(tmp_path, "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    proc.communicate(timeout=60)
    line = ours.makefile("rb").readline()
    hello = json.loads(line)
    assert hello["ok"] is False
    assert hello["error"] == "importing tg_preload_probe failed: ModuleNotFoundError: No module named 'numpy'"
