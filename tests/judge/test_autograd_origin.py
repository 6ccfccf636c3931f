"""Issue 44 item 6: every public autograd API counts as autograd in `intermediate_grad`'s advice.

The probe's origin watch (a dispatch mode in lost_gradients/probes.py) accepts a result that autograd's
backward pass wrote, or one made only from such results (a stack, a reshape, a selection: how
torch.autograd.functional.jacobian assembles the rows torch.autograd.grad gave it). Last round's decoys still
read as "by hand": a throw-away engine call beside a hand-derived value. The probe runs here, in a plain
process, on the course's own alternatives and the round-three decoy.
"""

from __future__ import annotations

import importlib.util
import types

import pytest
import torch

from tests.helpers import ROOT

EXERCISE = ROOT / "solutions" / "pytorch-fundamentals" / "lost_gradients"


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


PROBES = _load(EXERCISE / "probes.py", "lost_gradients_probes")
FN = torch.autograd.functional
APIS = {
    "backward": lambda w: _load(EXERCISE / "reference.py", "ref").intermediate_grad(w),
    "autograd.grad": lambda w: torch.autograd.grad(((w * 2) ** 2).sum(), w, retain_graph=True)[0] / 2,
    "functional.jacobian": lambda w: FN.jacobian(lambda v: (v**2).sum(), (w * 2).detach()),
    "functional.jacobian vectorized": lambda w: FN.jacobian(lambda v: (v**2).sum(), (w * 2).detach(),
                                                            vectorize=True),
    "functional.vjp": lambda w: FN.vjp(lambda v: (v**2).sum(), (w * 2).detach())[1],
    "functional.vhp input": lambda w: FN.vjp(lambda v: (v**2).sum(), (w * 2).detach())[1].clone(),
    "func.grad": lambda w: torch.func.grad(lambda v: (v**2).sum())((w * 2).detach()),
    "func.vjp": lambda w: torch.func.vjp(lambda v: (v**2).sum(), (w * 2).detach())[1](
        torch.ones((), dtype=w.dtype))[0],
    "func.jacrev": lambda w: torch.func.jacrev(lambda v: (v**2).sum())((w * 2).detach()),
}


def _origin(fn, shape=(2, 3)):
    info = PROBES.intermediate_grad_probe(types.SimpleNamespace(intermediate_grad=fn),
                                          torch.randn(shape, dtype=torch.float64))
    assert info["tampered"] is None
    return info["from_autograd"]


@pytest.mark.parametrize("api", sorted(APIS))
def test_every_public_autograd_api_counts(api):
    assert _origin(APIS[api]) is True, api


@pytest.mark.parametrize("alternative", sorted(p.name for p in (EXERCISE / "alternatives").glob("*.py")))
def test_every_alternative_reads_as_autograd(alternative):
    mod = _load(EXERCISE / "alternatives" / alternative, alternative.removesuffix(".py"))
    for shape in [(3,), (2, 3)]:
        assert _origin(mod.intermediate_grad, shape) is True, (alternative, shape)


def test_the_decoys_still_read_as_by_hand():
    def throwaway(w):
        w2 = w * 2
        torch.autograd.grad((w2**2).sum(), w2)
        return (4 * w).detach()

    def mixed(w):  # an autograd result, and a hand-derived one added to it
        w2 = w * 2
        (g,) = torch.autograd.grad((w2**2).sum(), w2)
        return g * 0 + 4 * w.detach()

    assert _origin(throwaway) is False
    assert _origin(mixed) is False
    assert _origin(lambda w: 4 * w.detach()) is False
