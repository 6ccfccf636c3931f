"""Hidden suite for `lost_gradients`."""
import pytest
import torch
import torch.nn.functional as F

from autograder.judge import assert_close, check, fail

D64 = torch.float64


def _require_tensor(info, call):
    check(info["type"] == "Tensor",
          f"`{call}` should return a torch.Tensor, but it returned a {info['type']}.")


def _upstream(shape, seed):
    """A judge-chosen upstream gradient with small integer values (exact in every float dtype)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-4, 5, shape, generator=g).double().add_(0.5)


def _check_leaf(info, call, dtype_name, upstream):
    """Points rest on an effect the judge checks: after (t * g).sum().backward(), t.grad is g.

    The tensor's flags (requires_grad, is_leaf, grad_fn) are only asserted by the
    sandbox, so they only choose the message when that effect is missing.
    """
    _require_tensor(info, call)
    values = info["values"]
    check(isinstance(values, torch.Tensor) and values.dtype == getattr(torch, dtype_name),
          f"`{call}` returned a tensor of dtype {info['dtype']}, expected torch.{dtype_name}. "
          "The `dtype` argument must be honoured.")
    grad = info.get("grad")
    expected = upstream.to(values.dtype)
    if isinstance(grad, torch.Tensor) and grad.shape == expected.shape and torch.equal(grad, expected):
        return
    check(info["requires_grad"],
          f"`{call}` returned a tensor that does not require grad (requires_grad=False).")
    check(info["is_leaf"],
          f"`{call}` returned a tensor that is not a leaf (its grad_fn is {info['grad_fn']}), so "
          "backward() never fills its .grad. Every operation applied after requires_grad=True "
          "(a .to() conversion included) creates a new, non-leaf tensor.")
    check(info.get("backward_error") is None,
          f"After `t = {call}`, `(t * g).sum().backward()` failed: {info.get('backward_error')}")
    check(grad is not None,
          f"After `t = {call}` and `(t * g).sum().backward()`, t.grad is still None.")
    fail(f"After `t = {call}` and `(t * g).sum().backward()`, t.grad is not g: backward does not "
         "reach the tensor make_leaf returned.")


# ---------------------------------------------------------------- make_leaf

@pytest.mark.points(1)
def test_make_leaf_defaults(student, sandbox):
    """make_leaf with default device and dtype gives a float32 CPU leaf requiring grad"""
    t = student.make_leaf((4, 5))
    check(isinstance(t, torch.Tensor),
          f"`make_leaf((4, 5))` should return a torch.Tensor, got {type(t).__name__}.")
    check(tuple(t.shape) == (4, 5),
          f"`make_leaf((4, 5))` returned shape {tuple(t.shape)}, expected (4, 5).")
    check(t.dtype == torch.float32,
          f"`make_leaf((4, 5))` returned a tensor of dtype {t.dtype}, expected torch.float32.")
    upstream = _upstream((4, 5), 45)
    info = sandbox.probe("make_leaf_probe", [4, 5], None, None, True, upstream)
    _check_leaf(info, "make_leaf((4, 5))", "float32", upstream)
    check(info["device"] == "cpu",
          f"`make_leaf((4, 5))` returned a tensor on {info['device']}, expected the default device 'cpu'.")


@pytest.mark.points(1.5)
def test_make_leaf_other_dtypes(student, sandbox):
    """make_leaf stays a leaf whose .grad fills in for float64, bfloat16 and an explicit device"""
    for shape, device, dtype_name in [((3, 2), "cpu", "float64"), ((6,), None, "float64"),
                                      ((2, 3, 2), "cpu", "bfloat16"), ((5,), "cpu", "float32")]:
        args = [f"{shape}"]
        if device is not None:
            args.append(f"device={device!r}")
        args.append(f"dtype=torch.{dtype_name}")
        call = f"make_leaf({', '.join(args)})"
        upstream = _upstream(shape, len(call))
        info = sandbox.probe("make_leaf_probe", list(shape), device, dtype_name, True, upstream)
        _check_leaf(info, call, dtype_name, upstream)
        check(info["device"] == "cpu", f"`{call}` returned a tensor on {info['device']}, expected cpu.")
        check(tuple(info["shape"]) == shape,
              f"`{call}` returned shape {tuple(info['shape'])}, expected {shape}.")


@pytest.mark.points(1)
def test_make_leaf_values(student, sandbox):
    """make_leaf draws standard normal values from torch's global generator"""
    shape = (300, 40)
    for dtype_name, seed in [("float64", 1234), ("float32", 98)]:
        dtype = getattr(torch, dtype_name)
        sandbox.seed(seed)
        info = sandbox.probe("make_leaf_probe", list(shape), None, dtype_name, False)
        call = f"make_leaf({shape}, dtype=torch.{dtype_name})"
        _require_tensor(info, call)
        check(tuple(info["shape"]) == shape,
              f"`{call}` returned shape {tuple(info['shape'])}, expected {shape}.")
        v = info["values"].double()
        mean, std = v.mean().item(), v.std().item()
        if v.min().item() >= 0 and v.max().item() <= 1:
            fail(f"`{call}` returned values all in [0, 1] (mean {mean:.3f}, std {std:.3f}): that "
                 "is a uniform distribution (torch.rand), not a standard normal one.")
        check(abs(mean) < 0.05 and abs(std - 1) < 0.05,
              f"`{call}` returned values with mean {mean:.3f} and standard deviation {std:.3f}; "
              "a standard normal tensor has mean 0 and standard deviation 1.")
        candidates = []
        torch.manual_seed(seed)
        candidates.append(torch.randn(shape, dtype=dtype))
        torch.manual_seed(seed)
        candidates.append(torch.randn(shape).to(dtype))
        check(any(torch.equal(info["values"].to(dtype), c) for c in candidates),
              f"After torch.manual_seed({seed}), `{call}` returned normal values that are not the "
              "ones torch's global random generator produces (as torch.randn does). Draw them "
              "with torch (not NumPy or a private torch.Generator), right away, so that "
              "torch.manual_seed makes make_leaf reproducible.")


# ---------------------------------------------------------------- intermediate_grad

@pytest.mark.points(1.5)
def test_intermediate_grad_values(student, sandbox):
    """intermediate_grad returns d loss / d w2 (float64 and float32)"""
    g = torch.Generator().manual_seed(5)
    for shape, dtype in [((7,), torch.float64), ((3, 4), torch.float64), ((5,), torch.float32)]:
        w = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        info = sandbox.probe("intermediate_grad_probe", w)
        name = f"the result of intermediate_grad(w) for w of shape {tuple(shape)} and dtype {dtype}"
        check(info["type"] != "NoneType",
              f"intermediate_grad(w) for w of shape {tuple(shape)} returned None. A non-leaf "
              "tensor such as w2 does not keep its .grad unless asked to before backward (or "
              "unless you ask autograd for that gradient directly).")
        _require_tensor(info, "intermediate_grad(w)")
        w2 = w.clone().requires_grad_(True) * 2
        (expected,) = torch.autograd.grad((w2 ** 2).sum(), w2)
        tol = 1e-12 if dtype == torch.float64 else 1e-6
        assert_close(info["values"], expected, rtol=tol, atol=tol, name=name,
                     misconceptions={
                         "It looks like the gradient with respect to the leaf w, not the "
                         "intermediate w2 = w * 2 (the chain rule adds a factor 2).": expected * 2,
                         "It looks like the gradient of w2.sum() rather than of (w2 ** 2).sum().":
                             torch.ones_like(expected),
                     })


@pytest.mark.points(0.5)
def test_intermediate_grad_uses_autograd(student, sandbox):
    """intermediate_grad obtains the gradient from autograd"""
    w = torch.tensor([0.5, -1.25, 2.0], dtype=D64)
    info = sandbox.probe("intermediate_grad_probe", w)
    _require_tensor(info, "intermediate_grad(w)")
    # fail closed: a hook point that is missing or no longer torch's own code earns nothing
    check(info.get("tampered") is None and isinstance(info.get("engine_calls"), int),
          f"The grader could not watch autograd during intermediate_grad(w): "
          f"{info.get('tampered') or 'its hook point is missing'}. Leave torch.autograd as PyTorch "
          "defines it.")
    check(info["engine_calls"] > 0,
          "intermediate_grad(w) returned without running autograd's backward pass at all "
          "(no backward() and no torch.autograd.grad call). The exercise asks you to get the "
          "gradient of the intermediate w2 from autograd, not to derive it by hand.")


# ---------------------------------------------------------------- diagnose

CHOICES = {"non_leaf", "not_retained", "not_differentiable", "no_grad_mode", "detached"}
SNIPPETS = {
    1: ("snippet 1 (`torch.randn(3, requires_grad=True).to(device)`)", "non_leaf",
        "look at what `.to(device)` returns when it has to copy, and which tensor is the leaf"),
    2: ("snippet 2 (reading `w2.grad` where `w2 = w * 2`)", "not_retained",
        "the gradient with respect to w2 is computed during backward; ask why it is not kept"),
    3: ("snippet 3 (a loss built from `argmax(...) == y`)", "not_differentiable",
        "argmax and == are piecewise constant: no gradient can tell the weights how to change"),
}


def _diagnosis(student):
    d = student.diagnose()
    check(isinstance(d, dict), f"`diagnose()` should return a dict, got {type(d).__name__}.")
    if not any(k in d for k in (1, 2, 3)) and any(k in d for k in ("1", "2", "3")):
        fail("`diagnose()` uses string keys ('1', '2', '3'); the snippet numbers must be int keys 1, 2, 3.")
    bad = {v for v in d.values() if v not in CHOICES}
    check(not bad, f"`diagnose()` contains values {sorted(map(repr, bad))} that are not among the "
                   f"allowed causes {sorted(CHOICES)}.")
    return d


def _check_snippet(student, k):
    d = _diagnosis(student)
    label, want, why = SNIPPETS[k]
    check(k in d, f"`diagnose()` has no entry for key {k}, {label}.")
    check(d[k] == want, f"`diagnose()[{k}]` for {label} is {d[k]!r}, which is not the cause. Hint: {why}.")


@pytest.mark.points(0.5)
def test_diagnose_snippet_1(student):
    """diagnose: snippet 1"""
    _check_snippet(student, 1)


@pytest.mark.points(0.5)
def test_diagnose_snippet_2(student):
    """diagnose: snippet 2"""
    _check_snippet(student, 2)


@pytest.mark.points(0.5)
def test_diagnose_snippet_3(student):
    """diagnose: snippet 3"""
    _check_snippet(student, 3)


# ---------------------------------------------------------------- training_loss

def _wrong_losses(logits, target):
    """Values of known-wrong training losses, computed judge-side."""
    out = {
        "It looks like the loss is summed over the batch instead of averaged.":
            F.cross_entropy(logits, target, reduction="sum"),
        "It looks like softmax was applied before F.cross_entropy, which applies log_softmax "
        "itself: the logits end up normalised twice.":
            F.cross_entropy(torch.softmax(logits, dim=1), target),
        "It looks like F.nll_loss was given raw logits; it expects log-probabilities "
        "(log_softmax is missing).":
            F.nll_loss(logits, target),
    }
    acc = (logits.argmax(dim=1) == target).to(logits.dtype).mean()
    out["It looks like an accuracy-based quantity: accuracy has no useful gradient, the "
        "training loss is the cross-entropy."] = 1 - acc
    return out


def _logits(n, C, seed, dtype=D64, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    x = (scale * torch.randn(n, C, generator=g, dtype=torch.float64)).to(dtype)
    y = torch.randint(0, C, (n,), generator=g)
    return x, y


@pytest.mark.points(1)
def test_training_loss_value(student):
    """training_loss is the mean cross-entropy on raw logits (value, dtype, inputs untouched)"""
    for n, C, dtype in [(9, 5, D64), (4, 3, torch.float32)]:
        logits, target = _logits(n, C, 10 + n, dtype)
        sent = (logits.clone(), target.clone())
        call = student.call_detailed("training_loss", logits, target)
        name = f"the value of training_loss(logits, target) for logits ({n}, {C}) of dtype {dtype}"
        expected = F.cross_entropy(logits, target)
        out = call.value
        if isinstance(out, torch.Tensor) and out.dim() > 0 and out.numel() == n:
            fail(f"training_loss(logits, target) for logits ({n}, {C}) returned a tensor of "
                 f"shape {tuple(out.shape)}: one loss per example. The training loss "
                 "must be a single number (0-d tensor), the mean over the batch.")
        tol = 1e-12 if dtype == D64 else 1e-6
        assert_close(out, expected, rtol=tol, atol=tol, name=name,
                     misconceptions=_wrong_losses(logits, target))
        check(torch.equal(call.args[0], sent[0]) and torch.equal(call.args[1], sent[1]),
              "training_loss(logits, target) modified its inputs in place; it must leave logits and target unchanged.")


@pytest.mark.points(1.5)
def test_training_loss_gradient(student, sandbox):
    """training_loss is differentiable and its gradient is the cross-entropy one"""
    for n, C, upstream in [(6, 4, 2.5), (1, 2, -0.75)]:
        logits, target = _logits(n, C, 40 + n)
        info = sandbox.probe("training_loss_probe", logits, target, upstream)
        _require_tensor(info, "training_loss(logits, target)")
        check(info["requires_grad"],
              "training_loss(logits, target) returned a tensor that does not depend differentiably "
              "on the logits (requires_grad is False): gradient descent cannot use it. Operations "
              "such as argmax or == have no gradient.")
        check(info["grad_error"] is None,
              f"Differentiating training_loss(logits, target) failed: {info['grad_error']}")
        check(info["grad"] is not None,
              "No gradient flows from training_loss(logits, target) back to the logits: the loss "
              "is not built from them through differentiable operations.")
        lg = logits.clone().requires_grad_(True)
        (expected,) = torch.autograd.grad(upstream * F.cross_entropy(lg, target), lg)
        wrong = {}
        for msg, f in [
            ("It looks like the gradient is n times too large: the loss is summed instead of "
             "averaged.",
             lambda z, t=target: F.cross_entropy(z, t, reduction="sum")),
            ("It looks like the gradient of cross_entropy(softmax(logits)): softmax is applied "
             "twice.",
             lambda z, t=target: F.cross_entropy(torch.softmax(z, dim=1), t)),
            ("It looks like the gradient of nll_loss on raw logits: log_softmax is missing.",
             lambda z, t=target: F.nll_loss(z, t)),
        ]:
            z = logits.clone().requires_grad_(True)
            (gw,) = torch.autograd.grad(upstream * f(z), z)
            wrong[msg] = gw
        assert_close(info["grad"], expected, rtol=1e-10, atol=1e-12,
                     name=f"the gradient of {upstream} * training_loss(logits, target) with respect "
                          f"to logits of shape ({n}, {C})",
                     misconceptions=wrong)


@pytest.mark.points(0.5)
def test_training_loss_stable(student):
    """training_loss is finite and right for logits as large as 1e4"""
    for dtype in (D64, torch.float32):
        logits, target = _logits(5, 4, 77, dtype, scale=1.0)
        logits = logits * 1e4
        expected = F.cross_entropy(logits, target)
        out = student.training_loss(logits, target)
        check(isinstance(out, torch.Tensor),
              f"training_loss should return a tensor, got {type(out).__name__}.")
        check(bool(torch.isfinite(out).all()),
              f"training_loss returned {out} for logits of magnitude 1e4 ({dtype}): exp() "
              "overflows unless the computation is stabilised (log-sum-exp).")
        tol = 1e-10 if dtype == D64 else 1e-5
        assert_close(out, expected, rtol=tol, atol=tol,
                     name=f"the value of training_loss for logits of magnitude 1e4 ({dtype})",
                     misconceptions=_wrong_losses(logits, target))
