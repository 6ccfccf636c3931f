"""The sandbox server's warm-up: a speed hint that must stay one.

Its steps swallow their errors (a sandbox that inherits less only works more), so a step broken by a new
torch would go unnoticed: these tests run each step raising. And a warm-up must not change what a sandbox
starts from: torch's default generator is the same in a sandbox forked before it and after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer
from tests.helpers import ROOT

STEPS = r"""
import json, sys
import torch
from autograder.sandbox import server
before = torch.get_rng_state()
for how in server.WARM_COMPILES:
    server._compile_tiny(how)
server._train_tiny()
print(json.dumps({"kept": bool(torch.equal(before, torch.get_rng_state()))}))
"""

# What a sandbox reports: a digest of torch's default generator, and whether the training step of its
# server's warm-up had run when it was forked (its checkpoint's save and load import this module).
STATE = """
import hashlib, sys, torch
STATE = (hashlib.sha256(torch.get_rng_state().numpy().tobytes()).hexdigest(),
         'torch.utils.serialization' in sys.modules)
"""


def test_every_warm_up_step_runs_without_error_and_leaves_the_generator_as_it_found_it():
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", STEPS], capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"kept": True}


def _state(judge: SandboxServer) -> tuple[str, bool]:
    sb = Sandbox(judge, SandboxConfig())
    try:
        sb.request("exec", STATE, cell=1, timeout=60)
        digest, trained = sb.request("getattr", target=None, name="STATE", timeout=30)[1]
        return digest, trained
    finally:
        sb.kill()


def test_a_sandbox_forked_after_the_whole_warm_up_starts_from_the_same_generator_as_one_forked_before():
    owner = SandboxServer(warm_compiler=True)
    judge = SandboxServer.attached(owner.connect_judge(warm_up=True).detach())
    try:
        judge.wait_ready()
        first, trained = _state(judge)
        assert not trained, "the first sandbox waited for the whole warm-up"
        deadline = time.monotonic() + 180
        later, trained = _state(judge)
        while not trained and time.monotonic() < deadline:
            time.sleep(0.2)
            later, trained = _state(judge)
        assert trained, ("no sandbox inherited the warm-up's training step within 180 s (its marker is "
                         "torch.utils.serialization, which torch.save and torch.load import in torch 2.13: "
                         "check it is still theirs before suspecting the warm-up)")
        assert later == first
    finally:
        judge.close()
        owner.close()
