"""The sandboxes' compiler set-up (autograder.sandbox.compiler): no guard-latency profiling, same compiles."""

from __future__ import annotations

import subprocess
import sys

from autograder.sandbox.client import Sandbox, SandboxConfig

COMPILES = """
import torch
import torch._dynamo.guards as guards

PROFILER = (guards.profile_guard_manager.__name__, guards.profile_guard_manager.__module__)
installed, calls = guards.profile_guard_manager, []
def watched(*args):  # what dynamo calls at each compile is the module's name, looked up then
    calls.append(installed(*args))
    return calls[-1]
guards.profile_guard_manager = watched
graphs = []
def counting(gm, example_inputs):
    graphs.append(len(example_inputs))
    return gm.forward

def f(x):
    return torch.relu(x) * 2 + 1

g = torch.compile(f, backend=counting, dynamic=False)
same = bool(torch.equal(g(torch.arange(-3.0, 3.0)), f(torch.arange(-3.0, 3.0))))
g(torch.arange(-3.0, 3.0) + 1)   # same shape: the guards pass, no new graph
g(torch.ones(2, 5))              # a new shape: the guards fail, dynamo compiles again
RESULT = (same, len(graphs), calls)
"""


def test_a_sandbox_compiles_without_the_guard_profiler_and_its_guards_still_guard(server):
    """Issue 25: dynamo's guard-latency profiler zeroes a fresh 32 MiB buffer at every compile (8,192 page
    faults in a sandbox). The server replaces it before the first sandbox; compiles, guards and recompilations
    are what they were."""
    sb = Sandbox(server, SandboxConfig())
    try:
        sb.request("exec", COMPILES, cell=1, timeout=120)
        get = lambda name: sb.request("getattr", target=None, name=name, timeout=10)[1]  # noqa: E731
        assert get("PROFILER") == ("_unprofiled", "autograder.sandbox.compiler")
        same, graphs, calls = get("RESULT")
        assert same and graphs == 2, "one graph per shape: the guards kept the first and rejected the second"
        assert calls == [0.0, 0.0], "each compile's guards went through the replacement, which timed nothing"
    finally:
        sb.kill()


def test_without_torch_dynamo_nothing_is_replaced():
    """Called before torch._dynamo is imported (a server for exercises that never compile), it imports nothing."""
    code = ("import sys, torch\nfrom autograder.sandbox.compiler import skip_guard_profiling\n"
            "print(skip_guard_profiling(), 'torch._dynamo.guards' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "False"], done.stderr[-2000:]
