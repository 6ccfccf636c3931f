"""Hidden suite for `lost_gradients`."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.judge import as_found, assert_close, check, fail, review
from autograder.judge.generated import draw

D64 = torch.float64


def _require_tensor(info, call):
    check(info["type"] == "Tensor", f"`{call}` should return a torch.Tensor, but it returned a {info['type']}.")


def _upstream(shape, seed):
    """A judge-chosen upstream gradient with small integer values (exact in every float dtype)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-4, 5, shape, generator=g).double().add_(0.5)


def _check_leaf(info, call, dtype_name, upstream):
    """Leaf-ness is shown by the effect and the flags together.

    The effect is one the judge chose: after (t * g).sum().backward(), t.grad is g. A
    non-leaf with retain_grad() shows that effect too, so the tensor's flags (a leaf,
    requiring grad, no grad_fn) are required as well; either alone earns nothing.
    """
    _require_tensor(info, call)
    values = info["values"]
    check(
        isinstance(values, torch.Tensor) and values.dtype == getattr(torch, dtype_name),
        f"`{call}` returned a tensor of dtype {info['dtype']}, expected torch.{dtype_name}. "
        "The `dtype` argument must be honoured.",
        misconception="ignores_dtype",
    )
    check(
        info["requires_grad"] is True,
        f"`{call}` returned a tensor that does not require grad (requires_grad=False).",
    )
    check(
        info["is_leaf"] is True and info["grad_fn"] is None,
        f"`{call}` returned a tensor that is not a leaf (its grad_fn is {info['grad_fn']}), so "
        "backward() never fills its .grad (retain_grad() only makes it keep a copy: it is still not a "
        "leaf, and an optimizer given it would update a tensor nothing else uses). Every operation "
        "applied after requires_grad=True (a .to() conversion included) creates a new, non-leaf tensor.",
        misconception="non_leaf",
    )
    grad = info.get("grad")
    expected = upstream.to(values.dtype)
    if isinstance(grad, torch.Tensor) and grad.shape == expected.shape and torch.equal(grad, expected):
        return
    check(
        info.get("backward_error") is None,
        f"After `t = {call}`, `(t * g).sum().backward()` failed: {info.get('backward_error')}",
    )
    check(grad is not None, f"After `t = {call}` and `(t * g).sum().backward()`, t.grad is still None.")
    fail(
        f"After `t = {call}` and `(t * g).sum().backward()`, t.grad is not g: backward does not "
        "reach the tensor make_leaf returned."
    )


# ---------------------------------------------------------------- make_leaf


@pytest.mark.rules("make_leaf")
@pytest.mark.points(1)
def test_make_leaf_defaults(student, sandbox):
    """make_leaf with default device and dtype gives a float32 CPU tensor of the shape asked"""
    t = student.make_leaf((4, 5))
    check(isinstance(t, torch.Tensor), f"`make_leaf((4, 5))` should return a torch.Tensor, got {type(t).__name__}.")
    check(tuple(t.shape) == (4, 5), f"`make_leaf((4, 5))` returned shape {tuple(t.shape)}, expected (4, 5).")
    check(
        t.dtype == torch.float32,
        f"`make_leaf((4, 5))` returned a tensor of dtype {t.dtype}, expected torch.float32.",
        misconception="ignores_dtype",
    )
    info = sandbox.probe("make_leaf_probe", [4, 5], None, None, False)
    check(
        info["device"] == "cpu",
        f"`make_leaf((4, 5))` returned a tensor on {info['device']}, expected the default device 'cpu'.",
    )


@pytest.mark.rules("make_leaf")
@pytest.mark.points(1)
def test_make_leaf_other_dtypes(student, sandbox):
    """make_leaf honours float64, bfloat16 and an explicit device"""
    for shape, device, dtype_name in [
        ((3, 2), "cpu", "float64"),
        ((6,), None, "float64"),
        ((2, 3, 2), "cpu", "bfloat16"),
        ((5,), "cpu", "float32"),
    ]:
        args = [f"{shape}"]
        if device is not None:
            args.append(f"device={device!r}")
        args.append(f"dtype=torch.{dtype_name}")
        call = f"make_leaf({', '.join(args)})"
        info = sandbox.probe("make_leaf_probe", list(shape), device, dtype_name, False)
        _require_tensor(info, call)
        check(
            info["dtype"] == f"torch.{dtype_name}",
            f"`{call}` returned a tensor of dtype {info['dtype']}, expected torch.{dtype_name}. "
            "The `dtype` argument must be honoured.",
            misconception="ignores_dtype",
        )
        check(info["device"] == "cpu", f"`{call}` returned a tensor on {info['device']}, expected cpu.")
        check(tuple(info["shape"]) == shape, f"`{call}` returned shape {tuple(info['shape'])}, expected {shape}.")
    # a device other than the default: "meta" holds no values, so only where the tensor lives is asked
    info = sandbox.probe("make_leaf_device", [2, 3], "meta")
    call = "make_leaf((2, 3), device='meta')"
    check(info["type"] == "Tensor", f"`{call}` returned a {info['type']}, not a tensor.")
    check(info["device"] == "meta", f"`{call}` returned a tensor on {info['device']}, expected one on the device "
                                    "it was given (meta).")


LEAF_CALLS = [((4, 5), None, None), ((3, 2), "cpu", "float64"), ((2, 3, 2), "cpu", "bfloat16")]


@pytest.mark.rules("make_leaf")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_make_leaf_is_a_leaf(student, sandbox):
    """make_leaf gives a leaf requiring grad whose .grad fills in (advice: 0 points)"""
    # Whether a tensor is a leaf, requires grad and gets a .grad exists only in the student's process (a Tensor
    # subclass can say anything about itself), so it earns no point (issue 43); the values above carry them.
    for shape, device, dtype_name in LEAF_CALLS:
        args = [f"{shape}"] + ([f"device={device!r}"] if device else []) \
            + ([f"dtype=torch.{dtype_name}"] if dtype_name else [])
        call = f"make_leaf({', '.join(args)})"
        upstream = _upstream(shape, len(call))
        info = sandbox.probe("make_leaf_probe", list(shape), device, dtype_name, True, upstream)
        if info.get("exact_type") not in (None, "Tensor", "Parameter"):
            review(f"make_leaf returned a {info['exact_type']} (a Tensor subclass), whose is_leaf and grad_fn "
                   "it may define itself: the leaf advice rests on what it says")
        _check_leaf(info, call, dtype_name or "float32", upstream)
    info = sandbox.probe("make_leaf_device", [2, 3], "meta")
    check(info.get("is_leaf") and info.get("requires_grad"),
          "`make_leaf((2, 3), device='meta')` did not return a leaf that requires grad.", misconception="non_leaf")


@pytest.mark.rules("make_leaf")
@pytest.mark.points(1)
def test_make_leaf_values(student, sandbox):
    """make_leaf draws standard normal values from torch's global generator"""
    shape = (300, 40)
    for dtype_name, seed in [("float64", 1234), ("float32", 98)]:
        sandbox.seed(seed)
        info = sandbox.probe("make_leaf_probe", list(shape), None, dtype_name, False)
        call = f"make_leaf({shape}, dtype=torch.{dtype_name})"
        _require_tensor(info, call)
        check(tuple(info["shape"]) == shape, f"`{call}` returned shape {tuple(info['shape'])}, expected {shape}.")
        v = info["values"].double()
        mean, std = v.mean().item(), v.std().item()
        if v.min().item() >= 0 and v.max().item() <= 1:
            fail(
                f"`{call}` returned values all in [0, 1] (mean {mean:.3f}, std {std:.3f}): that "
                "is a uniform distribution (torch.rand), not a standard normal one.",
                misconception="uniform_values",
            )
        check(
            abs(mean) < 0.05 and abs(std - 1) < 0.05,
            f"`{call}` returned values with mean {mean:.3f} and standard deviation {std:.3f}; "
            "a standard normal tensor has mean 0 and standard deviation 1.",
        )
    # (torch seed, NumPy/random seed) before each call: torch's seed alone must decide the values.
    plan = [[7, 1], [7, 2], [8, 1]]
    first, same_torch, other_torch = sandbox.probe("make_leaf_seeded", [50], "float64", plan)
    check(
        all(isinstance(t, torch.Tensor) for t in (first, same_torch, other_torch)),
        "make_leaf((50,), dtype=torch.float64) did not return a tensor.",
    )
    if torch.equal(first, other_torch) and not torch.equal(first, same_torch):
        fail(
            "make_leaf's values followed NumPy's (or Python's) random seed, not torch.manual_seed: "
            "draw them with torch (torch.randn and friends), so that torch.manual_seed makes make_leaf "
            "reproducible.",
            misconception="not_torch_generator",
        )
    check(
        torch.equal(first, same_torch) and not torch.equal(first, other_torch),
        "After the same torch.manual_seed, make_leaf returned different values (or the same values "
        "after different seeds): draw them from torch's global random generator, right away, with no "
        "generator= argument and no NumPy.",
        misconception="not_torch_generator",
    )


# ---------------------------------------------------------------- intermediate_grad


@pytest.mark.rules("intermediate_grad")
@pytest.mark.points(2)
def test_intermediate_grad_values(student, sandbox):
    """intermediate_grad returns d loss / d w2 (float64 and float32)"""
    g = torch.Generator().manual_seed(5)
    for shape, dtype in [((7,), torch.float64), ((3, 4), torch.float64), ((5,), torch.float32)]:
        w = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        info = sandbox.probe("intermediate_grad_probe", w)
        name = f"the result of intermediate_grad(w) for w of shape {tuple(shape)} and dtype {dtype}"
        check(
            info["type"] != "NoneType",
            misconception="not_retained",
            message=(
                f"intermediate_grad(w) for w of shape {tuple(shape)} returned None. A non-leaf "
                "tensor such as w2 does not keep its .grad unless asked to before backward (or "
                "unless you ask autograd for that gradient directly)."
            ),
        )
        _require_tensor(info, "intermediate_grad(w)")
        w2 = w.clone().requires_grad_(True) * 2
        (expected,) = torch.autograd.grad((w2**2).sum(), w2)
        tol = 1e-12 if dtype == torch.float64 else 1e-6
        assert_close(
            info["values"],
            expected,
            rtol=tol,
            atol=tol,
            name=name,
            misconceptions={
                "grad_wrt_leaf": (
                    "It looks like the gradient with respect to the leaf w, not the "
                    "intermediate w2 = w * 2 (the chain rule adds a factor 2).",
                    expected * 2,
                ),
                "sum_not_square": (
                    "Every entry is 1: the gradient of a plain sum of the tensor whose gradient was read, "
                    "with no square after it, whereas d/dw2 of (w2 ** 2).sum() is 2 * w2.",
                    torch.ones_like(expected),
                ),
            },
        )


@pytest.mark.rules("intermediate_grad")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_intermediate_grad_uses_autograd(student, sandbox):
    """intermediate_grad obtains the gradient from autograd (advice: 0 points)"""
    # Who computed a value exists only in the student's process, and loss = (w2 ** 2).sum() is fixed by the
    # contract, so no value tells autograd from 4 * w: advice, worth nothing (issue 43). Every public autograd
    # API counts (issue 44): backward, torch.autograd.grad, torch.autograd.functional.*, torch.func.*.
    w = torch.tensor([0.5, -1.25, 2.0], dtype=D64)
    info = sandbox.probe("intermediate_grad_probe", w)
    _require_tensor(info, "intermediate_grad(w)")
    # fail closed: a measurement that was removed or replaced earns nothing
    check(
        info.get("tampered") is None and type(info.get("from_autograd")) is bool,
        f"The grader could not watch autograd during intermediate_grad(w): "
        f"{info.get('tampered') or 'its measurement is missing'}. Leave torch's dispatch modes and "
        "torch.autograd as PyTorch defines them.",
    )
    check(
        info["from_autograd"],
        "intermediate_grad(w) returned a tensor that autograd's backward pass did not compute "
        "(it was derived some other way, even if backward() or torch.autograd.grad ran too). The "
        "exercise asks you to get the gradient of the intermediate w2 from autograd, not to derive it "
        "by hand: return w2.grad (after w2.retain_grad()), or what torch.autograd.grad, "
        "torch.autograd.functional.jacobian / vjp or torch.func.grad / vjp / jacrev give.",
        misconception="by_hand",
    )


# ---------------------------------------------------------------- diagnose

CHOICES = {"non_leaf", "not_retained", "not_differentiable", "no_grad_mode", "detached"}
SNIPPETS = {
    1: (
        "snippet 1 (`torch.randn(3, requires_grad=True).to(device)`)",
        "non_leaf",
        "look at what `.to(device)` returns when it has to copy, and which tensor is the leaf",
    ),
    2: (
        "snippet 2 (reading `w2.grad` where `w2 = w * 2`)",
        "not_retained",
        "the gradient with respect to w2 is computed during backward; ask why it is not kept",
    ),
    3: (
        "snippet 3 (a loss built from `argmax(...) == y`)",
        "not_differentiable",
        "argmax and == are piecewise constant: no gradient can tell the weights how to change",
    ),
}


def _diagnosis(student):
    d = student.diagnose()
    check(isinstance(d, dict), f"`diagnose()` should return a dict, got {type(d).__name__}.")
    if not any(k in d for k in (1, 2, 3)) and any(k in d for k in ("1", "2", "3")):
        fail("`diagnose()` uses string keys ('1', '2', '3'); the snippet numbers must be int keys 1, 2, 3.")
    bad = {v for v in d.values() if v not in CHOICES}
    check(
        not bad,
        f"`diagnose()` contains values {sorted(map(repr, bad))} that are not among the "
        f"allowed causes {sorted(CHOICES)}.",
    )
    return d


def _check_snippet(student, k):
    d = _diagnosis(student)
    label, want, why = SNIPPETS[k]
    check(k in d, f"`diagnose()` has no entry for key {k}, {label}.")
    if d[k] == "detached" and want != "detached":
        fail(
            f"`diagnose()[{k}]` for {label} is 'detached', but nothing in it calls .detach() or .data: "
            f"the graph is not cut explicitly. Hint: {why}.",
            misconception="diagnose_detached",
        )
    check(d[k] == want, f"`diagnose()[{k}]` for {label} is {d[k]!r}, which is not the cause. Hint: {why}.")


@pytest.mark.rules("diagnose")
@pytest.mark.points(0.5)
def test_diagnose_snippet_1(student):
    """diagnose: snippet 1"""
    _check_snippet(student, 1)


@pytest.mark.rules("diagnose")
@pytest.mark.points(0.5)
def test_diagnose_snippet_2(student):
    """diagnose: snippet 2"""
    _check_snippet(student, 2)


@pytest.mark.rules("diagnose")
@pytest.mark.points(0.5)
def test_diagnose_snippet_3(student):
    """diagnose: snippet 3"""
    _check_snippet(student, 3)


# ---------------------------------------------------------------- training_loss


def _wrong_losses(logits, target):
    """{key: (message, function of the logits)} for known-wrong training losses, evaluated judge-side."""
    C = logits.shape[1]
    return (
        {
            "sum_reduction": (
                "It looks like the loss is summed over the batch instead of averaged.",
                lambda z: F.cross_entropy(z, target, reduction="sum"),
            ),
            "softmax_twice": (
                "It looks like softmax was applied before F.cross_entropy, which applies "
                "log_softmax itself: the logits end up normalised twice.",
                lambda z: F.cross_entropy(torch.softmax(z, dim=1), target),
            ),
            "nll_on_logits": (
                "It looks like F.nll_loss was given raw logits; it expects log-probabilities (log_softmax is missing).",
                lambda z: F.nll_loss(z, target),
            ),
            "softmax_wrong_dim": (
                "It looks like the softmax normalises over the batch (dim=0) instead of over "
                "each example's C classes (dim=1).",
                lambda z: F.nll_loss(F.log_softmax(z, dim=0), target),
            ),
            "accuracy_loss": (
                "It looks like an accuracy-based quantity: accuracy has no useful gradient, the "
                "training loss is the cross-entropy.",
                lambda z: 1 - (z.argmax(dim=1) == target).to(z.dtype).mean(),
            ),
        }
        if C > 1
        else {}
    )


def _distinct(wrong, logits, expected, tol):
    """Evaluate the wrong losses; drop those that coincide with the truth or with each other here."""
    values = {k: (m, f(logits)) for k, (m, f) in wrong.items()}
    close = lambda a, b: bool(torch.allclose(a.double(), b.double(), rtol=tol, atol=tol))  # noqa: E731
    clash = {a for a in values for b in values if a != b and close(values[a][1], values[b][1])}
    return {k: v for k, v in values.items() if k not in clash and not close(v[1], expected)}


def _wrong_grads(logits, target, upstream, tol, expected):
    out = {}
    for k, (m, f) in _wrong_losses(logits, target).items():
        if k == "accuracy_loss":
            continue
        z = logits.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(upstream * f(z), z)
        out[k] = (m, g)
    close = lambda a, b: bool(torch.allclose(a, b, rtol=tol, atol=tol))  # noqa: E731
    clash = {a for a in out for b in out if a != b and close(out[a][1], out[b][1])}
    return {k: v for k, v in out.items() if k not in clash and not close(v[1], expected)}


def _judge_loss(label, logits, target, info, upstream, grads=True):
    if info["type"] == "error":
        err = info["error"]
        C = logits.shape[1]
        if "must match the size" in err and int(target.max()) + 1 < C:
            fail(
                f"training_loss on {label} raised {err}. The largest target here is {int(target.max())}, "
                f"below C - 1 = {C - 1}: F.one_hot(target) without num_classes makes only max(target) + 1 "
                f"columns. Pass num_classes=logits.shape[1] (or use F.cross_entropy).",
                misconception="one_hot_num_classes",
            )
        fail(f"training_loss on {label} raised {err}.")
    _require_tensor(info, "training_loss(logits, target)")
    out = info["values"]
    n = logits.shape[0]
    if out.dim() > 0 and out.numel() == n and n > 1:
        fail(
            f"training_loss on {label} returned a tensor of shape {tuple(out.shape)}: one loss per example. "
            "The training loss must be a single number (0-d tensor), the mean over the batch.",
            misconception="no_reduction",
        )
    check(
        torch.equal(info["logits_after"], logits) and torch.equal(info["target_after"], target),
        f"training_loss on {label} modified its inputs in place; it must leave logits and target unchanged.",
        misconception="modifies_input",
    )
    expected = F.cross_entropy(logits, target)
    tol = 1e-10 if logits.dtype == D64 else 1e-5
    wrong = _distinct(_wrong_losses(logits, target), logits, expected, tol)
    if not info["requires_grad"] or (grads and info["grad"] is None and info["grad_error"] is None):
        acc = "accuracy_loss" in wrong and torch.allclose(
            out.double().reshape(()), wrong["accuracy_loss"][1].double(), atol=1e-12
        )
        fail(
            f"No gradient flows from training_loss on {label} back to the logits (requires_grad is "
            f"{info['requires_grad']}): the loss is not built from them through differentiable operations, "
            "so gradient descent cannot use it."
            + (
                " Its value is 1 - accuracy: argmax and == are piecewise constant, they have no gradient."
                if acc
                else ""
            ),
            misconception="accuracy_loss" if acc else "",
        )
    assert_close(
        out.reshape(()) if out.numel() == 1 else out,
        expected,
        rtol=tol,
        atol=tol,
        name=f"the value of training_loss on {label}",
        misconceptions=wrong,
    )
    if grads:
        check(info["grad_error"] is None, f"Differentiating training_loss on {label} failed: {info['grad_error']}")
        lg = logits.clone().requires_grad_(True)
        (g_expected,) = torch.autograd.grad(upstream * F.cross_entropy(lg, target), lg)
        gtol = 1e-10 if logits.dtype == D64 else 1e-5
        assert_close(
            info["grad"],
            g_expected,
            rtol=gtol,
            atol=gtol,
            name=f"the gradient of {upstream} * training_loss with respect to the logits ({label})",
            misconceptions=lambda: _wrong_grads(logits, target, upstream, gtol, g_expected),
        )


def _losses(sandbox, cases, upstream=1.0, grads=True):
    infos = sandbox.probe("losses_many", [[lg, t] for _, lg, t in cases], upstream)
    check(isinstance(infos, list) and len(infos) == len(cases), "grader bug: losses_many replied badly")
    for (label, lg, t), info in zip(cases, infos, strict=True):
        _judge_loss(label, lg, t, info, upstream, grads)


def _logits(n, C, seed, dtype=D64, scale=2.0, full_targets=True):
    g = torch.Generator().manual_seed(seed)
    x = (scale * torch.randn(n, C, generator=g, dtype=torch.float64)).to(dtype)
    y = torch.randint(0, C, (n,), generator=g)
    if full_targets:
        y[0] = C - 1
    return x, y


@pytest.mark.rules("training_loss")
@pytest.mark.points(1)
def test_training_loss_value(sandbox):
    """training_loss is the mean cross-entropy on raw logits (value, dtype, inputs untouched)"""
    cases = []
    for n, C, dtype in [(9, 5, D64), (4, 3, torch.float32)]:
        logits, target = _logits(n, C, 10 + n, dtype)
        cases.append((f"logits ({n}, {C}) of dtype {dtype}", logits, target))
    _losses(sandbox, cases, grads=False)


@pytest.mark.rules("training_loss")
@pytest.mark.points(1)
def test_training_loss_gradient(sandbox):
    """training_loss is differentiable and its gradient is the cross-entropy one"""
    for n, C, upstream in [(6, 4, 2.5), (1, 2, -0.75)]:
        logits, target = _logits(n, C, 40 + n)
        _losses(sandbox, [(f"logits of shape ({n}, {C})", logits, target)], upstream)


@pytest.mark.rules("training_loss")
@pytest.mark.points(0.5)
def test_training_loss_stable(sandbox):
    """training_loss is finite and right for logits as large as 1e4"""
    cases = []
    for dtype in (D64, torch.float32):
        logits, target = _logits(5, 4, 77, dtype, scale=1.0)
        cases.append((f"logits of magnitude 1e4 ({dtype})", logits * 1e4, target))
    infos = sandbox.probe("losses_many", [[lg, t] for _, lg, t in cases], 1.0)
    for (label, lg, t), info in zip(cases, infos, strict=True):
        if info["type"] == "Tensor" and not bool(torch.isfinite(info["values"]).all()):
            fail(
                f"training_loss returned {info['values']} for {label}, where the mean cross-entropy is finite "
                f"({F.cross_entropy(lg.double(), t).item():.6g}): logits this large are part of the contract."
            )
        _judge_loss(label, lg, t, info, 1.0, grads=False)


GENERATED = st.tuples(
    st.integers(1, 8),  # n
    st.integers(2, 9),  # C
    st.sampled_from([D64, torch.float32]),
    st.sampled_from([2.0, 0.5, 20.0, 300.0]),
    st.booleans(),  # targets may miss the last class
    st.integers(0, 2**32 - 1),
)


@pytest.mark.rules("training_loss")
@pytest.mark.points(0.5)
def test_training_loss_generated(sandbox):
    """training_loss agrees with F.cross_entropy (value and gradient) on generated batches"""
    cases = []
    for n, C, dtype, scale, full, seed in draw(GENERATED, 20, "lost_gradients/training_loss v1"):
        logits, target = _logits(n, C, seed % 100000, dtype, scale, full)
        cases.append(
            (f"({n}, {C}) {str(dtype)[6:]} logits of scale {scale:g}, targets {target.tolist()}", logits, target)
        )
    _losses(sandbox, cases, upstream=1.5)


# ---------------------------------------------------------------- the conventions

CONVENTIONS = st.tuples(st.integers(1, 6), st.integers(2, 6), st.sampled_from([D64, torch.float32]),
                        st.integers(0, 2**31 - 1))


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_functions_leave_inputs_and_settings_as_found(student, sandbox):
    """Every function leaves its tensor inputs and torch's global settings as it found them"""
    for n, C, dtype, seed in draw(CONVENTIONS, 4, "lost_gradients/conventions v1"):
        kind = f"({n}, {C}) {str(dtype)[6:]}"
        w = torch.randn(n, C, generator=torch.Generator().manual_seed(seed), dtype=dtype)
        as_found(sandbox, student.intermediate_grad, w, names=["w"], requires_grad=["w"],
                 call=f"intermediate_grad(w) for a {kind} leaf w requiring grad")
        logits, target = _logits(n, C, seed % 100000, dtype)
        as_found(sandbox, student.training_loss, logits, target, names=["logits", "target"],
                 call=f"training_loss(logits, target) for {kind} logits")
        as_found(sandbox, student.make_leaf, (n, C), call=f"make_leaf(({n}, {C}))")
    as_found(sandbox, student.diagnose, call="diagnose()")
