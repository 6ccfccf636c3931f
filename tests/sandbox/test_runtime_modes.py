"""Each test starts from torch's modes as the cells left them (``runtime.TorchModes``).

A function that leaves gradient recording off, or the default dtype changed, used to fail every later test
of its sandbox, and which tests shared it depended on how the submission was split (judge/spread.py).
"""

from __future__ import annotations

from autograder.sandbox.client import Sandbox, SandboxConfig

CELLS = (
    "import torch\n"
    "torch.set_default_dtype(torch.float64)  # the cells' own choice: kept for every test\n"
    "def leak():\n"
    "    torch.set_grad_enabled(False)\n"
    "    torch.set_default_dtype(torch.float16)\n"
    "    torch.use_deterministic_algorithms(True)\n"
    "def modes():\n"
    "    return [torch.is_grad_enabled(), str(torch.get_default_dtype()),\n"
    "            torch.are_deterministic_algorithms_enabled()]\n"
)


def test_each_test_starts_from_the_modes_the_cells_left(server):
    sb = Sandbox(server, SandboxConfig())
    try:
        sb.request("exec", CELLS, cell=1, timeout=30)
        call = {"target": None, "timeout": 10}
        _, first = sb.request("call", ([], {}), name="modes", seed_first=1, **call)
        assert first == [True, "torch.float64", False]
        sb.request("call", ([], {}), name="leak", seed_first=2, **call)
        _, same_test = sb.request("call", ([], {}), name="modes", **call)
        assert same_test == [False, "torch.float16", True]  # within one test, what its calls left stays
        _, next_test = sb.request("call", ([], {}), name="modes", seed_first=3, **call)
        assert next_test == [True, "torch.float64", False]
    finally:
        sb.kill()
