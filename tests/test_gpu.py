"""On a CUDA host: the sandbox reaches the GPU, and amp_loop and compile are graded on it.

Skipped, with the reason shown, where torch.cuda.is_available() is false.
"""

from __future__ import annotations

import pytest

from autograder.authoring.validate import validate
from autograder.sandbox.client import Sandbox, SandboxConfig
from tests.helpers import ROOT, run_if

pytestmark = [pytest.mark.gpu, run_if(cuda=True)]


def test_the_sandbox_sees_the_gpu(server):
    sb = Sandbox(server, SandboxConfig())
    try:
        sb.request("exec", "import torch\nx = torch.ones(3, device='cuda') * 2\nOK = (x.sum().item(), "
                   "torch.cuda.get_device_name(0))", cell=1, timeout=120)
        total, name = sb.request("getattr", target=None, name="OK", timeout=30)[1]
        assert total == 6.0 and name
    finally:
        sb.kill()


def test_amp_loop_and_compile_references_and_mutants_on_cuda():
    """Reference full marks, stubs 0, alternatives full, every mutant caught: graded on CUDA."""
    lines: list[str] = []
    code = validate("pytorch-fundamentals", ROOT, ["amp_loop", "compile"], jobs=1, out=lines.append)
    assert code == 0, "\n".join(lines)
