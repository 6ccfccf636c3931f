"""The judge's static tamper scan: it flags what reaches for the grader, never honest code."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.judge.tamper import scan
from autograder.load import LoadError, load
from tests.helpers import ROOT

HONEST = sorted(ROOT.glob("solutions/*/*/reference.py")) + sorted(ROOT.glob("solutions/*/*/alternatives/*.py"))
SAMPLES = sorted(p for d in ("samples", "samples-distributed-training") for p in (ROOT / d).iterdir() if p.is_file())
CHEATER = "dave"  # the README's cheating sample: rebinds torch.allclose


@pytest.mark.parametrize("path", HONEST + SAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_never_flags_references_alternatives_or_honest_samples(path):
    try:
        sub = load(path)
    except LoadError:
        pytest.skip(f"{path.name} is the deliberately unreadable sample")
    flags = scan(sub)
    if path.stem == CHEATER:
        assert any("torch.allclose" in f.reason for f in flags), flags
    else:
        assert flags == [], [(f.where, f.reason) for f in flags]


def _flags(tmp_path: Path, source: str) -> list[str]:
    f = tmp_path / "sub.py"
    f.write_text(source)
    return [f"{fl.line}: {fl.reason}" for fl in scan(load(f))]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import autograder.sandbox.runtime as r\n", "grader's own code"),
        ("from autograder.sandbox import wire\nwire.tensor_meta = lambda t: {}\n", "grader's own code"),
        ("import sys\nx = sys.modules['torch']\n", "sys.modules"),
        ("import sys\nf = sys._getframe(1)\n", "call stack"),
        ("import gc\nobjs = gc.get_objects()\n", "garbage collector"),
        ("from gc import get_objects\nget_objects()\n", "garbage collector"),
        ("import inspect\nfor fr in inspect.stack():\n    pass\n", "call stack"),
        ("def f(e):\n    return e.__traceback__.tb_frame.f_back.f_locals\n", "f_locals"),
        ("def f(g):\n    return g.__closure__[0].cell_contents\n", "closure"),
        ("import ctypes\n", "ctypes"),
        ("def f(a, b):\n    a.__code__ = b.__code__\n", "__code__"),
        ("import torch\nclass M(type(torch.autograd)):\n    pass\ntorch.autograd.__class__ = M\n", "__class__"),
        ("import torch\ntorch.compile = lambda m, **k: m\n", "torch.compile"),
        ("import torch.autograd as ag\nag._engine_run_backward = print\n", "torch.autograd._engine_run_backward"),
        ("from torch import nn\nnn.Module.__call__ = lambda *a: None\n", "torch.nn.Module.__call__"),
        ("import torch\nsetattr(torch.autograd, 'grad', None)\n", "torch.autograd"),
        ("import torch\nag = torch.autograd\nag.grad = None\n", "torch.autograd.grad"),
        ("code = 'x' + '=1'\nexec(code)\n", "built at run time"),
        ("import base64\neval(base64.b64decode(b'MQ=='))\n", "built at run time"),
        ("import probes_compile\n", "probes"),
    ],
)
def test_flags_each_kind_of_tampering_with_its_line(tmp_path, source, expected):
    flags = _flags(tmp_path, source)
    assert any(expected in f for f in flags), flags
    last = len(source.rstrip("\n").splitlines())
    assert any(f.startswith(f"{n}:") for f in flags for n in range(1, last + 1))


@pytest.mark.parametrize(
    "source",
    [
        "from autograder import check\ncheck('softmax_grad')\n",
        "import autograder\nautograder.check('views')\n",
        "import torch\ntorch.backends.cudnn.deterministic = True\ntorch.manual_seed(0)\n",
        "import torch\nimport torch._dynamo\ntorch._dynamo.config.cache_size_limit = 16\n",
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 2)\n    def forward(self, x):\n        return self.fc(x)\n",
        "eval('1 + 1')\nexec('y = 2')\n",
        "import sys\nprint(sys.version)\n",
        "import numpy as np\nnp.random.seed(0)\n",
    ],
)
def test_honest_idioms_are_not_flagged(tmp_path, source):
    assert _flags(tmp_path, source) == []


def test_flag_names_the_cell_and_line(tmp_path):
    """In a .py file the place is the file's own line number (what the student's editor shows)."""
    f = tmp_path / "sub.py"
    f.write_text(
        "import torch\n\n\ndef double(x):\n    return x * 2\n\n\n# %%\nimport gc\nok = 1\nn = len(gc.get_objects())\n"
    )
    flags = scan(load(f))
    assert [fl.where for fl in flags] == ["line 11"], flags


# ---------------------------------------------------------------- ways around an in-process measurement (issue 22)
BYPASSES = [
    ("forward", "def f(model, X):\n    return type(model).forward(model, X)\n"),
    ("forward", "def f(model, X):\n    h = model[0].forward(X)\n    return model[1:](h)\n"),
    ("forward", "def f(model, X):\n    return model.__class__.forward(model, X)\n"),
    ("attribute_dict", "def f(loss):\n    vars(loss.grad_fn).clear()\n"),
    ("attribute_dict", "def f(loss):\n    loss.grad_fn.__dict__.clear()\n"),
    ("attribute_dict", "def f(node):\n    vars(node)['_probe'] = None\n"),
    ("attribute_dict", "def f(node):\n    node.__dict__.pop('_probe', None)\n"),
    ("rebinds_machinery", "import os\nos.listdir = lambda p: ['ckpt.pt']\n"),
    ("rebinds_machinery", "import os.path\nos.path.isfile = lambda p: True\n"),
    ("rebinds_machinery", "import os\nsetattr(os, 'listdir', list)\n"),
    ("rebinds_machinery", "import torch\n_load = torch.load\ntorch.load = lambda *a, **k: _load(*a)\n"),
    ("rebinds_machinery", "import torch.distributed as dist\ndist.is_initialized = lambda: True\n"),
    ("rebinds_machinery", "import torch\nsetattr(torch.distributed, 'all_reduce', print)\n"),
    ("identity_function",
     "import torch\nclass Wrap(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        return x.clone()\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"),
    ("identity_function",
     "from torch.autograd import Function\nclass Wrap(Function):\n    @staticmethod\n    def forward(ctx, x, *w):\n"
     "        return x.view_as(x)\n    @staticmethod\n    def backward(ctx, g):\n        return (g,)\n"),
    ("mode_stack", "from torch.utils._python_dispatch import _pop_mode\n_pop_mode()\n"),
    ("mode_stack", "import torch\ntorch._C._pop_torch_function_stack()\n"),
    ("mode_stack", "import torch.overrides\nclass M(torch.overrides.TorchFunctionMode):\n    pass\n"),
    ("mode_stack", "import torch\nwith torch._C.DisableTorchFunction():\n    pass\n"),
    ("mode_stack", "import torch.utils._python_dispatch as d\nd._push_mode(None)\n"),
]


@pytest.mark.parametrize("kind, source", BYPASSES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(BYPASSES)])
def test_flags_every_known_way_around_an_in_process_measurement(tmp_path, kind, source):
    from autograder.judge.tamper import KNOWN_BYPASSES

    flags = _flags(tmp_path, source)
    assert any(f.endswith(KNOWN_BYPASSES[kind]) for f in flags), flags
    assert all(int(f.split(":")[0]) > 0 for f in flags)


def test_every_known_bypass_has_a_case_here():
    from autograder.judge.tamper import KNOWN_BYPASSES

    assert {k for k, _ in BYPASSES} == set(KNOWN_BYPASSES)


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nclass STE(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        return torch.round(x)\n    @staticmethod\n    def backward(ctx, g):\n        return g\n",
        "import os\nos.makedirs('out', exist_ok=True)\nos.environ['X'] = '1'\nok = os.path.isfile('out')\n",
        "import torch\nsd = torch.load('f.pt', weights_only=True)\n",
        "import torch.distributed as dist\ndef f(t):\n    dist.all_reduce(t)\n    return dist.get_rank()\n",
        "def f(model, x):\n    return model.fc1.forward(x)\n",
        "def f(args):\n    return dict(vars(args))\n",
        "def f(self, x):\n    return super().forward(x)\n",
    ],
)
def test_honest_uses_of_the_same_names_are_not_flagged(tmp_path, source):
    assert _flags(tmp_path, source) == []


def test_the_readme_lists_every_known_bypass():
    """The threat model's list of what the scan flags for review is the code's list."""
    from autograder.judge.tamper import KNOWN_BYPASSES

    readme = (ROOT / "README.md").read_text()
    for reason in KNOWN_BYPASSES.values():
        assert reason in " ".join(readme.split()), reason
