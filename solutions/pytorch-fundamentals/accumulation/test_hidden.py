"""Hidden suite of `accumulation` (gradient accumulation, scaled right)."""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.judge import assert_close, check, fail

TOL = dict(rtol=1e-9, atol=1e-12)
LOSSES = {None: F.mse_loss, "mse": F.mse_loss, "cross_entropy": F.cross_entropy, "l1": F.l1_loss}


def _model(sizes):
    d_in, hidden, d_out = sizes
    return nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out)).double()


def _grads(model, X, Y, loss_fn, weight=1.0):
    model.zero_grad(set_to_none=True)
    (loss_fn(model(X), Y) * weight).backward()
    return {k: p.grad.clone() for k, p in model.named_parameters()}


def _chunks(X, Y, m):
    return [(X[s:s + m], Y[s:s + m]) for s in range(0, len(X), m)]


def _wrong_answers(model, X, Y, m, loss_fn, prefill):
    """Judge-side gradients of known-wrong accumulation schemes, for diagnosis."""
    n = len(X)
    chunks = _chunks(X, Y, m)
    k = len(chunks)
    per_batch = [_grads(model, xb, yb, loss_fn) for xb, yb in chunks]
    names = list(per_batch[0])
    wrong = {}

    def add(msg, d):
        wrong[msg] = d

    add("Each micro-batch's mean loss was backpropagated unscaled, so the gradients are "
        "the sum of the micro-batch means: weight each micro-batch by its share of the examples.",
        {q: sum(g[q] for g in per_batch) for q in names})
    if n % m:
        add("Every micro-batch was weighted by 1 / (number of micro-batches); that is only right "
            "when all micro-batches have the same size, and here the last one is shorter.",
            {q: sum(g[q] for g in per_batch) / k for q in names})
        used = (n // m) * m
        if used:
            add("The short last micro-batch was skipped: every example must be used once.",
                {q: sum(g[q] for g in per_batch[:-1]) / (n // m) for q in names})
    add("Only the last micro-batch's gradient is left: clearing the gradients inside the "
        "micro-batch loop throws away the earlier micro-batches.",
        {q: per_batch[-1][q] * (len(chunks[-1][0]) / n) for q in names})
    if prefill is not None:
        full = _grads(model, X, Y, loss_fn)
        add("The gradients that were already in .grad before the call were kept and added to: "
            "the contract says they must be discarded.",
            {q: full[q] + prefill for q in names})
    return wrong


def _run(sandbox, X, Y, m, loss_name=None, sizes=(3, 5, 2), prefill=None):
    torch.manual_seed(int(X.numel() * 7 + m))
    model = _model(sizes)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    loss_fn = LOSSES[loss_name]
    out = sandbox.probe("run_accumulation", list(sizes), state, X, Y, m, loss_name, prefill)
    expected = _grads(model, X, Y, loss_fn)
    wrong = _wrong_answers(model, X, Y, m, loss_fn, prefill)
    return out, expected, wrong


def _check_grads(out, expected, wrong, label):
    check(out["returned"] is None,
          f"accumulate_gradients should return None (it works through the parameters' .grad); "
          f"it returned a {out['returned']}.")
    for name, exp in expected.items():
        got = out["grads"][name]
        if got is None:
            fail(f"After accumulate_gradients ({label}), the .grad of parameter `{name}` is None: "
                 f"every parameter should hold the full-batch gradient.")
        assert_close(got, exp, **TOL, name=f"the .grad of parameter `{name}` ({label})",
                     misconceptions={msg: d[name] for msg, d in wrong.items()},
                     hint="Compare with a full-batch loss_fn(model(X), Y).backward() in float64; "
                          "the mean over all examples is a weighted sum of micro-batch means.")


def _data(n, d_in=3, d_out=2, classes=None):
    X = torch.randn(n, d_in, dtype=torch.float64)
    Y = torch.randint(0, classes, (n,)) if classes else torch.randn(n, d_out, dtype=torch.float64)
    return X, Y


@pytest.mark.points(2)
def test_divisible_mse(sandbox):
    """Micro-batches that divide the batch (default F.mse_loss)"""
    for n, m in [(12, 4), (9, 3)]:
        X, Y = _data(n)
        out, expected, wrong = _run(sandbox, X, Y, m)
        _check_grads(out, expected, wrong, f"n = {n}, micro_batch_size = {m}")
        check(out["X_unchanged"] and out["Y_unchanged"],
              "accumulate_gradients modified X or Y in place; it must leave its inputs alone.")


@pytest.mark.points(2)
def test_short_last_micro_batch(sandbox):
    """A shorter last micro-batch is weighted by its size"""
    for n, m in [(10, 4), (7, 5), (11, 2)]:
        X, Y = _data(n)
        out, expected, wrong = _run(sandbox, X, Y, m)
        _check_grads(out, expected, wrong, f"n = {n}, micro_batch_size = {m}: the last "
                                            f"micro-batch has {n % m} example(s)")


@pytest.mark.points(1)
def test_other_loss_functions(sandbox):
    """Other mean losses passed as loss_fn (cross-entropy, L1)"""
    X, Y = _data(7, d_out=4, classes=4)
    out, expected, wrong = _run(sandbox, X, Y, 3, loss_name="cross_entropy", sizes=(3, 6, 4))
    _check_grads(out, expected, wrong, "loss_fn = F.cross_entropy, n = 7, micro_batch_size = 3")
    X, Y = _data(8, d_out=3)
    out, expected, wrong = _run(sandbox, X, Y, 3, loss_name="l1", sizes=(3, 4, 3))
    _check_grads(out, expected, wrong, "loss_fn = F.l1_loss, n = 8, micro_batch_size = 3")


@pytest.mark.points(1.5)
def test_old_gradients_discarded(sandbox):
    """Gradients already in .grad before the call are discarded"""
    for n, m in [(8, 4), (6, 4)]:
        X, Y = _data(n)
        out, expected, wrong = _run(sandbox, X, Y, m, prefill=3.0)
        _check_grads(out, expected, wrong, f"n = {n}, micro_batch_size = {m}, with stale "
                                            f"values in .grad before the call")


@pytest.mark.points(1.5)
def test_runs_micro_batches_in_order(sandbox):
    """The model sees micro-batches of at most micro_batch_size, in order, never the whole batch"""
    for n, m in [(10, 3), (8, 4)]:
        X, Y = _data(n)
        out, _, _ = _run(sandbox, X, Y, m)
        seen = out["forward_inputs"]
        sizes = [len(x) for x in seen]
        check(len(seen) > 0, "the model's forward was never called.")
        if any(s == n for s in sizes):
            fail(f"With n = {n} and micro_batch_size = {m}, the model was called on the whole "
                 f"batch at once (forward batch sizes {sizes}). Gradient accumulation exists to "
                 f"avoid exactly that; every forward must see at most micro_batch_size examples "
                 f"(compute nothing on the full batch, not even a loss for logging).")
        check(all(s <= m for s in sizes),
              f"With micro_batch_size = {m}, the model saw batches of sizes {sizes}; each "
              f"forward must see at most {m} examples.")
        expected_sizes = [min(m, n - s) for s in range(0, n, m)]
        check(sizes == expected_sizes and torch.equal(torch.cat(seen), X),
              f"With n = {n} and micro_batch_size = {m}, the model saw batches of sizes {sizes}. "
              f"The contract asks for consecutive micro-batches X[0:m], X[m:2m], ... in order, "
              f"each example exactly once, the last one possibly shorter.")


@pytest.mark.points(0.5)
def test_edge_micro_batch_sizes(sandbox):
    """Edge sizes: micro_batch_size 1, equal to and larger than the batch"""
    for n, m in [(5, 1), (6, 6), (4, 10)]:
        X, Y = _data(n)
        out, expected, wrong = _run(sandbox, X, Y, m)
        _check_grads(out, expected, wrong, f"n = {n}, micro_batch_size = {m}")


@pytest.mark.points(1.5)
def test_unscaled_factor(student):
    """unscaled_factor: how much too large unscaled accumulation is"""
    for n, m in [(12, 4), (64, 8), (5, 5), (6, 1), (100, 25)]:
        # Judge-side truth from a real experiment: a linear model, per-micro-batch mean losses
        # backpropagated unscaled, compared with the full-batch gradient.
        X = torch.randn(n, 2, dtype=torch.float64)
        Y = torch.randn(n, 1, dtype=torch.float64)
        w = torch.randn(2, 1, dtype=torch.float64, requires_grad=True)
        F.mse_loss(X @ w, Y).backward()
        full = w.grad.clone()
        w.grad = None
        for s in range(0, n, m):
            F.mse_loss(X[s:s + m] @ w, Y[s:s + m]).backward()
        truth = (w.grad / full).mean().item()
        got = student.unscaled_factor(n, m)
        check(isinstance(got, (int, float)) and not isinstance(got, bool),
              f"unscaled_factor({n}, {m}) must return a number (float), got "
              f"{type(got).__name__} `{got!r}`.")
        if not math.isclose(got, truth, rel_tol=1e-6):
            why = ""
            if math.isclose(got, 1 / truth, rel_tol=1e-6):
                why = (" That is the inverse: the question asks how many times too large the "
                       "unscaled gradient is, not the correction factor to apply.")
            elif math.isclose(got, m, rel_tol=1e-6):
                why = " That is the micro-batch size, not the quantity asked for."
            fail(f"unscaled_factor({n}, {m}) returned {got!r}, which is not the factor by which "
                 f"the unscaled accumulated gradient exceeds the full-batch one.{why} Count how "
                 f"many micro-batch means get summed, each of them the size of a full-batch mean.")
