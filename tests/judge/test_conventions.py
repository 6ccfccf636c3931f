"""The contract's conventions on any call: inputs left unmodified, global settings (grad mode, dtype) as found."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograder.assignment import load_assignment
from autograder.errors import Failure
from autograder.grade import grade
from autograder.judge.conventions import check_observed, settings_probe
from autograder.options import GradeOptions
from autograder.sandbox.conventions import observe
from tests.helpers import ROOT, build_submission


def _checked(fn, *args, call="f(x)", names=("x",), **kw):
    probe = settings_probe(call)
    out = observe(fn, probe, *args, _names=list(names), **kw)
    check_observed(out, probe, call=call, args=args, names=names)
    return out


def test_an_in_place_round_is_caught_and_an_out_of_place_one_is_not() -> None:
    x = torch.tensor([0.4, 1.6, -2.0])
    _checked(torch.round, x.clone())
    with pytest.raises(Failure, match=r"After f\(x\), `x` had its values changed \(2 of 3 elements\)"):
        _checked(lambda t: t.round_(), x.clone())


def test_a_module_whose_weights_or_mode_change_is_caught() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).eval()
    _checked(lambda m: sum(p.numel() for p in m.parameters()), model, names=("model",))
    with pytest.raises(Failure, match=r"`model` was left in train mode \(it was in eval mode"):
        _checked(lambda m: m.train(), model, names=("model",))
    model.eval()
    with pytest.raises(Failure, match=r"`model`'s 0.weight changed"):
        _checked(lambda m: m[0].weight.data.mul_(2), model, names=("model",))
    # what the exercise says a function changes is not held against it
    probe = settings_probe("train")
    out = observe(lambda m: m[0].weight.data.mul_(2), probe, model, _names=["model"], _may_change=["model"])
    check_observed(out, probe, call="train(model)", names=("model",), may_change=("model",))


def test_grad_mode_or_default_dtype_left_changed_is_caught_and_the_caller_gets_its_mode_back() -> None:
    assert torch.is_grad_enabled()
    with pytest.raises(Failure, match=r"gradient recording was off .*; the call found it on"):
        _checked(lambda: torch.set_grad_enabled(False), names=())
    assert torch.is_grad_enabled()  # observe restores the caller's mode whatever the call did
    # found off (the graded call of a function "without autograd"), turned on: caught too
    probe = settings_probe("g")
    out = observe(lambda: torch.set_grad_enabled(True), probe, _grad_mode=False)
    with pytest.raises(Failure, match=r"gradient recording was on .*; the call found it off"):
        check_observed(out, probe, call="g()", grad_mode=False)
    before = torch.get_default_dtype()
    try:
        with pytest.raises(Failure, match=r"default dtype was torch.float64; the call found it torch.float32"):
            _checked(lambda: torch.set_default_dtype(torch.float64), names=())
    finally:
        torch.set_default_dtype(before)
    # a block that restores what it changed is what the contract asks for
    def scoped():
        with torch.no_grad():
            return F.relu(torch.ones(2))

    _checked(scoped, names=())


@pytest.fixture(scope="module")
def fundamentals():
    return load_assignment("pytorch-fundamentals", ROOT)


def _graded(fundamentals, server, tmp_path: Path, exercise: str, replace: tuple[str, str], keyword: str):
    reference = (ROOT / "solutions" / "pytorch-fundamentals" / exercise / "reference.py").read_text()
    assert replace[0] in reference
    sub = build_submission(tmp_path / "sub.py", reference.replace(*replace))
    (r,) = grade(fundamentals, [sub], server=server, options=GradeOptions(exercises=[exercise], keyword=keyword))
    return [t for e in r.exercises for t in e.tests]


def test_a_straight_through_round_that_rounds_its_input_in_place_loses_the_points(fundamentals, server,
                                                                                  tmp_path: Path) -> None:
    tests = _graded(fundamentals, server, tmp_path, "custom_autograd",
                    ("return torch.round(x)", "return x.round_()"), "as_found")
    (bad,) = tests
    assert bad.status == "failed" and bad.points == 0, bad
    assert "StraightThroughRound.apply(x)" in bad.message and "`x` had its values changed" in bad.message


def test_an_epoch_loss_that_leaves_grad_mode_off_loses_the_points(fundamentals, server, tmp_path: Path) -> None:
    tests = _graded(fundamentals, server, tmp_path, "checkpointing",
                    ("    with torch.no_grad():\n        for x, y in loader:",
                     "    torch.set_grad_enabled(False)\n    if True:\n        for x, y in loader:"),
                    "epoch_loss_leaves_model")
    (bad,) = tests
    assert bad.status == "failed", bad
    assert "gradient recording was off" in bad.message and "found it on" in bad.message, bad.message
