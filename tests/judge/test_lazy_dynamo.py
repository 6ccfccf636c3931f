"""The judge's stand-in for torch._dynamo (autograder.judge.lazy_dynamo): the same training, the real one on demand.

Each case runs in a fresh interpreter: the stand-in only goes in before anything imports torch._dynamo, and
this test process may have imported it already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

TRAIN = """
import hashlib, json, sys
import torch
import torch.nn.functional as F

def run():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(7, 3))
    opts = [torch.optim.SGD(model[0].parameters(), lr=0.1, momentum=0.9),
            torch.optim.AdamW(model[3].parameters(), lr=0.01, weight_decay=0.1)]
    sched = torch.optim.lr_scheduler.StepLR(opts[0], step_size=2, gamma=0.5)
    x, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    for step in range(6):
        for o in opts:
            o.zero_grad()
        F.cross_entropy(model(x), y).backward()
        for o in opts:
            o.step()
        sched.step()
    state = opts[1].state_dict()
    fresh = torch.optim.AdamW(model[3].parameters(), lr=0.01)
    fresh.load_state_dict(state)
    fresh.step()
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()
"""


def _python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_training_with_the_stand_in_is_bit_for_bit_the_same_and_never_imports_dynamo():
    with_it = _python("from autograder.judge import lazy_dynamo\ninstalled = lazy_dynamo.install()\n" + TRAIN + """
digest = run()
real = [m for m in ("torch._dynamo.eval_frame", "torch._dynamo.convert_frame") if m in sys.modules]
print(json.dumps({"installed": installed, "digest": digest, "real": real}))
""")
    without = _python(TRAIN + """
print(json.dumps({"digest": run(), "real": "torch._dynamo.eval_frame" in sys.modules}))
""")
    assert with_it["installed"] is True
    assert with_it["real"] == []  # steps, zero_grad, state_dict and load_state_dict asked the stand-in only
    assert without["real"] is True  # without it, the same training imports torch._dynamo
    assert with_it["digest"] == without["digest"]


def test_anything_else_imports_the_real_module_once_and_wrappers_made_before_defer_to_it():
    got = _python("from autograder.judge import lazy_dynamo\nlazy_dynamo.install()\n" + TRAIN + """
run()                                   # the optimizers' disable wrappers are cached, made by the stand-in
import torch._dynamo.config as config   # a submodule: the real package, each module loaded once
real = sys.modules["torch._dynamo"]
calls = []
original = real.disable
def counting(fn, *a, **k):
    calls.append(getattr(fn, "__name__", "?"))
    return original(fn, *a, **k)
real.disable = counting
after = run()                           # the cached wrappers now go through the real torch._dynamo.disable
real.disable = original
compiled = torch.compile(lambda t: t * 2 + 1, backend="eager", fullgraph=True)(torch.ones(3)).tolist()
print(json.dumps({
    "real": type(real).__name__ == "module" and hasattr(real, "optimize"),
    "one_config": config is real.config and sys.modules["torch._dynamo.config"] is config,
    "spec": config.__spec__.origin.endswith("config.py"),
    "attr": torch._dynamo is real,
    "deferred": "zero_grad" in calls,
    "compiled": compiled,
    "same": after == run(),
}))
""")
    assert got == {"real": True, "one_config": True, "spec": True, "attr": True, "deferred": True,
                   "compiled": [3.0, 3.0, 3.0], "same": True}


@pytest.mark.parametrize("before", ["import torch._dynamo", "import torch; torch._dynamo"])
def test_nothing_is_put_in_place_once_the_real_module_is_imported(before):
    got = _python(before + """
import json, sys
from autograder.judge import lazy_dynamo
print(json.dumps({"installed": lazy_dynamo.install(), "real": hasattr(sys.modules["torch._dynamo"], "optimize")}))
""")
    assert got == {"installed": False, "real": True}


def test_inspecting_every_module_does_not_import_the_real_one():
    got = _python("""
import inspect, json, os, sys
from autograder.judge import lazy_dynamo
lazy_dynamo.install()
import torch
module = inspect.getmodule(torch.nn.Linear.forward)  # reads each module's __file__
stand_in = sys.modules["torch._dynamo"]
print(json.dumps({"found": module.__name__, "stand_in": type(stand_in).__name__ == "_StandIn",
                  "real_loaded": "torch._dynamo.eval_frame" in sys.modules, "file": os.path.isfile(stand_in.__file__)}))
""")
    assert got == {"found": "torch.nn.modules.linear", "stand_in": True, "real_loaded": False, "file": True}
