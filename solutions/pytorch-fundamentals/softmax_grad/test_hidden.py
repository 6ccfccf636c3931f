"""Hidden suite of `softmax_grad` (the softmax cross-entropy gradient by hand)."""
import pytest
import torch
import torch.nn.functional as F

from autograder.judge import assert_close, check, fail

F64 = dict(rtol=1e-10, atol=1e-13)
F32 = dict(rtol=1e-5, atol=1e-6)


def _expected(logits, target):
    """The truth, from torch's autograd in float64, cast back to the input dtype."""
    z = logits.detach().to(torch.float64).clone().requires_grad_(True)
    F.cross_entropy(z, target).backward()
    return z.grad.to(logits.dtype)


def _misconceptions(logits, target, expected):
    n = logits.shape[0] if logits.dim() == 2 else 1
    c = logits.shape[-1]
    out = {
        "The result is the negative of the gradient: d(loss)/d(logits) is softmax minus "
        "the one-hot target, not the other way round.": -expected,
    }
    if n > 1:
        out["The gradient is n times too large: the default reduction averages the loss over "
            "the n examples, so the gradient must be averaged too."] = expected * n
        out["This looks divided by n twice."] = expected / n
    if logits.dim() == 1:
        out["For unbatched (C,) logits there is a single example: the gradient must not be "
            "divided by the number of classes."] = expected / c
    return out


def _check(student, logits, target, label, tol):
    expected = _expected(logits, target)
    got = student.softmax_ce_grad(logits, target)
    _check_value(got, expected, logits, target, label, tol)


def _check_value(got, expected, logits, target, label, tol):
    same_shape = isinstance(got, torch.Tensor) and got.shape == expected.shape
    if same_shape and got.dtype != expected.dtype:
        fail(f"softmax_ce_grad on {label} returned a {_dt(got)} gradient for {_dt(logits)} "
             f"logits. Keep the input's dtype: compute in logits.dtype (no .float() or "
             f".double()), and make any one-hot or constant tensors in that dtype too.")
    assert_close(got, expected, **tol, name=f"the gradient returned by softmax_ce_grad on {label}",
                 misconceptions=_misconceptions(logits, target, expected),
                 hint="Check yourself against autograd: "
                      "z = logits.clone().requires_grad_(True); "
                      "F.cross_entropy(z, target).backward(); then compare z.grad with your "
                      "result.")


def _dt(t):
    return str(t.dtype).removeprefix("torch.")


@pytest.mark.points(2)
def test_batched_float64(student):
    """Batched (n, C) float64 logits: exact gradient"""
    for n, c in [(5, 4), (8, 10), (3, 7)]:
        logits = torch.randn(n, c, dtype=torch.float64) * 3
        target = torch.randint(0, c, (n,))
        _check(student, logits, target, f"float64 logits of shape ({n}, {c})", F64)


@pytest.mark.points(1)
def test_batched_float32_keeps_dtype(student):
    """Batched float32 logits: float32 gradient"""
    for n, c in [(6, 5), (4, 3)]:
        logits = torch.randn(n, c) * 2
        target = torch.randint(0, c, (n,))
        _check(student, logits, target, f"float32 logits of shape ({n}, {c})", F32)


@pytest.mark.points(1.5)
def test_unbatched(student):
    """Unbatched (C,) logits with a 0-d target"""
    for c, t, dtype, tol in [(6, 2, torch.float64, F64), (3, 0, torch.float64, F64),
                             (5, 4, torch.float32, F32)]:
        logits = torch.randn(c, dtype=dtype) * 2
        target = torch.tensor(t)
        assert target.dim() == 0, "grader bug: the unbatched target must be 0-d"
        name = str(dtype).removeprefix("torch.")
        _check(student, logits, target,
               f"unbatched {name} logits of shape ({c},) and a 0-d target", tol)


@pytest.mark.points(1)
def test_edge_sizes(student):
    """Edge sizes: one example, two classes, many classes"""
    cases = [
        ("a single example (1, 4)", torch.randn(1, 4, dtype=torch.float64), torch.tensor([3])),
        ("two classes (7, 2)", torch.randn(7, 2, dtype=torch.float64), torch.randint(0, 2, (7,))),
        ("1000 classes (3, 1000)", torch.randn(3, 1000, dtype=torch.float64) * 4,
         torch.tensor([0, 999, 512])),
        ("all examples with the same target (4, 3)", torch.randn(4, 3, dtype=torch.float64),
         torch.tensor([1, 1, 1, 1])),
    ]
    for label, logits, target in cases:
        _check(student, logits, target, label, F64)


@pytest.mark.points(2)
def test_numerically_stable(student):
    """Huge logits (+-1e4): finite and correct"""
    cases = [
        ("float64", torch.tensor([[1e4, -1e4, 0.0, 3.0],
                                  [-1e4, -1e4, -1e4 + 1.0, -1e4 + 2.0],
                                  [1e4, 1e4, 1e4 - 0.5, -1e4]], dtype=torch.float64),
         torch.tensor([0, 3, 2])),
        ("float32", torch.tensor([[1e4, 9999.0, -1e4],
                                  [-1e4, -1e4 + 1.0, -1e4 + 1.0]], dtype=torch.float32),
         torch.tensor([1, 0])),
        ("float64 unbatched", torch.tensor([-1e4, 1e4, 1e4 - 1.0], dtype=torch.float64),
         torch.tensor(2)),
    ]
    for label, logits, target in cases:
        got = student.softmax_ce_grad(logits, target)
        check(isinstance(got, torch.Tensor), f"softmax_ce_grad must return a tensor, got "
                                             f"{type(got).__name__}.")
        if got.is_floating_point() and not torch.isfinite(got).all():
            fail(f"softmax_ce_grad on {label} logits of size about 1e4 returned non-finite values "
                 f"({int((~torch.isfinite(got)).sum())} nan/inf entries). exp(1e4) overflows to "
                 f"inf and inf/inf is nan: use a formulation of softmax that never exponentiates "
                 f"a large positive number (softmax is unchanged by subtracting a constant "
                 f"from a row).")
        # Logits of size 1e4 carry an absolute rounding error of about 1e4 * eps of their
        # dtype, which any correct formulation may pass on to the gradient.
        tol = (dict(rtol=1e-8, atol=1e-10) if logits.dtype == torch.float64
               else dict(rtol=1e-3, atol=2e-3))
        _check(student, logits, target, f"{label} logits of size about 1e4", tol)


@pytest.mark.points(1.5)
def test_without_autograd(student, sandbox):
    """Works with gradient recording off (inside torch.no_grad())"""
    logits = torch.randn(6, 5, dtype=torch.float64)
    target = torch.randint(0, 5, (6,))
    got = sandbox.probe("grad_under_no_grad", logits, target)
    _check_value(got, _expected(logits, target), logits, target,
                 "(6, 5) float64 logits inside torch.no_grad()", F64)


@pytest.mark.points(1)
def test_inputs_unchanged(student):
    """Leaves logits and target unchanged"""
    for label, logits, target in [
        ("(4, 3) float64", torch.randn(4, 3, dtype=torch.float64) * 5, torch.tensor([2, 0, 1, 2])),
        ("(5,) float32 unbatched", torch.randn(5) * 5, torch.tensor(1)),
    ]:
        sent_logits, sent_target = logits.clone(), target.clone()
        call = student.call_detailed("softmax_ce_grad", logits, target)
        after_logits, after_target = call.args
        check(torch.equal(after_logits, sent_logits),
              f"softmax_ce_grad modified the caller's logits ({label}) in place. Operations "
              f"such as `-=`, `/=`, `exp_()` or index assignment on `logits` change the "
              f"caller's tensor; compute on new tensors instead.")
        check(torch.equal(after_target, sent_target),
              f"softmax_ce_grad modified the caller's target ({label}) in place.")
