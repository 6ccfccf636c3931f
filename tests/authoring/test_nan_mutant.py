"""validate's NaN-returning mutant (issue 22): a NaN must fail every test that a wrong finite value fails."""

from __future__ import annotations

import math

import torch

from autograder.authoring.cases import poisoned
from autograder.authoring.validate import NAN_CHECK, judge_nan
from autograder.results import ExerciseResult, SubmissionResult
from autograder.results import TestResult as Outcome
from tests.helpers import ROOT

SOLUTIONS = ROOT / "solutions" / "pytorch-fundamentals"


def _module(exercise: str, kind: str) -> dict:
    ref = SOLUTIONS / exercise / "reference.py"
    ns: dict = {}
    exec(compile(ref.read_text() + "\n" + poisoned(ref, exercise, kind), str(ref), "exec"), ns)  # noqa: S102
    return ns


def test_the_nan_mutant_returns_nan_and_its_twin_a_finite_wrong_value():
    x = torch.randn(5, dtype=torch.float64)
    for kind in ("nan", "perturbed"):
        ns = _module("custom_autograd", kind)
        d2 = ns["second_derivative"](torch.sin, x)
        assert bool(torch.isnan(d2).all()) == (kind == "nan")
        cube = ns["Cube"].apply(x.clone().requires_grad_(True))  # a Function's forward is poisoned too
        assert bool(torch.isnan(cube).all()) == (kind == "nan")
    ns = _module("lost_gradients", "nan")
    assert ns["diagnose"]() == {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}  # strings stay
    loss = ns["training_loss"](torch.randn(3, 4, requires_grad=True), torch.tensor([0, 1, 2]))
    assert math.isnan(loss.item()) and loss.requires_grad


def _result(name: str, failing: set[str]) -> SubmissionResult:
    tests = [Outcome(nodeid=f"x::{t}", name=t, exercise="ex", max_points=1.0,
                        status="failed" if t in failing else "passed", points=0.0 if t in failing else 1.0)
             for t in ("value", "type", "mode")]
    return SubmissionResult(submission=name, path=name, assignment="a", status="graded",
                            exercises=[ExerciseResult(id="ex", title="ex", tests=tests, max_points=3.0)])


def test_a_test_that_a_nan_passes_but_a_wrong_value_fails_is_a_hole():
    row = judge_nan("ex", _result("nan", {"value"}), _result("perturbed", {"value", "mode"}))
    assert row.check == NAN_CHECK and not row.ok and "mode" in row.detail
    assert judge_nan("ex", _result("nan", {"value", "mode"}), _result("perturbed", {"value", "mode"})).ok


def test_the_linter_names_an_inline_comparison_that_a_nan_passes():
    import ast

    from autograder.authoring.lint import nan_passing_comparisons

    unsafe = "def test_x():\n    if abs(v - e) > 1e-9 * abs(e):\n        fail('wrong value')\n"
    judged = "def test_x():\n    if abs(v - e) >= tol:\n        _judge_mean_loss(v)\n"
    safe = ("def test_x():\n    if not abs(v - e) <= tol:\n        fail('wrong')\n"
            "    if abs(v - e) <= tol:\n        return\n    huge = x.abs().max() > 100\n")
    assert nan_passing_comparisons(ast.parse(unsafe)) == [2]
    assert nan_passing_comparisons(ast.parse(judged)) == [2]
    assert nan_passing_comparisons(ast.parse(safe)) == []


def test_what_a_function_changes_in_place_is_poisoned_too():
    """accumulate_gradients returns None: its answer is the .grad it leaves, and a generated wrong answer that
    changed only return values never reached its tests (issue 44: an unknown wrong answer per test)."""
    torch.manual_seed(0)
    X, Y = torch.randn(12, 3, dtype=torch.float64), torch.randn(12, 2, dtype=torch.float64)
    grads = {}
    for kind in ("identity", "perturbed", "nan"):
        model = torch.nn.Linear(3, 2).double()
        model.load_state_dict({"weight": torch.ones(2, 3, dtype=torch.float64),
                               "bias": torch.zeros(2, dtype=torch.float64)})
        ns = _module("accumulation", kind)
        assert ns["accumulate_gradients"](model, X, Y, 4) is None
        grads[kind] = model.weight.grad.clone()
        assert torch.equal(model.weight.detach(), torch.ones(2, 3, dtype=torch.float64))  # unchanged: not poisoned
    torch.testing.assert_close(grads["perturbed"], grads["identity"] * 1.375 + 0.25)
    assert bool(torch.isnan(grads["nan"]).all())
    assert not torch.isnan(grads["identity"]).any()
