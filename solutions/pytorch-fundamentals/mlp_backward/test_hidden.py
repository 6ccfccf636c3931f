"""Hidden suite for `mlp_backward`."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.judge import Failure, as_found, assert_close, check, fail, gradcheck
from autograder.judge.generated import draw

D64, F32 = torch.float64, torch.float32
KEYS = ("W1", "b1", "W2", "b2")


def _problem(n, d, h, C, seed, dtype=D64, scale=1.0, margin=1e-3):
    """Random inputs (judge-side) with every pre-activation A at least `margin` away from 0,
    so that the ReLU derivative is unambiguous."""
    for s in range(seed, seed + 1000):
        g = torch.Generator().manual_seed(s)
        X = torch.randn(n, d, generator=g, dtype=D64)
        W1 = torch.randn(d, h, generator=g, dtype=D64) / d**0.5
        b1 = 0.5 * torch.randn(h, generator=g, dtype=D64)
        W2 = scale * torch.randn(h, C, generator=g, dtype=D64) / h**0.5
        b2 = 0.5 * torch.randn(C, generator=g, dtype=D64)
        y = torch.randint(0, C, (n,), generator=g)
        A = X @ W1 + b1
        if A.abs().min() > margin and (A > 0).any() and (A < 0).any():
            return [X.to(dtype), y, W1.to(dtype), b1.to(dtype), W2.to(dtype), b2.to(dtype)]
    raise RuntimeError("could not draw a problem with a ReLU margin")


def _torch_grads(X, y, W1, b1, W2, b2, upstream=1.0, loss=None):
    ws = [t.clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    Z = torch.relu(X @ ws[0] + ws[1]) @ ws[2] + ws[3]
    L = F.cross_entropy(Z, y) if loss is None else loss(X, Z, y)
    return dict(zip(KEYS, torch.autograd.grad(upstream * L, ws)))


def _naive_grads(X, y, W1, b1, W2, b2, softmax_dim=1, shift=True, softmax_dtype=None):
    """The hand derivation in the inputs' dtype, optionally with softmax over the wrong dimension or
    without the max shift: what those known-wrong derivations return."""
    n = X.shape[0]
    A = X @ W1 + b1
    H = torch.relu(A)
    Z = H @ W2 + b2
    Zs = Z - Z.max(dim=softmax_dim, keepdim=True).values if shift else Z
    E = torch.exp(Zs)
    if shift == "log":  # log-softmax as Z - log(sum(exp(Z))) without a shift: exp overflows to inf inside the log
        dZ = torch.exp(Z - torch.log(torch.exp(Z).sum(dim=softmax_dim, keepdim=True)))
    elif softmax_dtype is not None:  # the softmax alone computed in a narrower dtype
        E = torch.exp(Zs.to(softmax_dtype))
        dZ = (E / E.sum(dim=softmax_dim, keepdim=True)).to(Z.dtype)
    else:
        dZ = E / E.sum(dim=softmax_dim, keepdim=True)
    dZ[torch.arange(n), y] -= 1
    dZ = dZ / n
    dA = (dZ @ W2.T) * (A > 0).to(dZ.dtype)
    return {"W1": X.T @ dA, "b1": dA.sum(0), "W2": H.T @ dZ, "b2": dZ.sum(0)}


def _wrong_grads(X, y, W1, b1, W2, b2, upstream=1.0):
    """Per key of KEYS: {misconception key: (message, gradient a known-wrong derivation gives)}.

    Candidates that coincide with the truth or with each other on these inputs are dropped: matching
    one of them would not say which mistake it is.
    """
    n = X.shape[0]
    g = _torch_grads(X, y, W1, b1, W2, b2, upstream)
    cands = {}
    ws = [t.clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    A = X @ ws[0] + ws[1]
    H = torch.relu(A).detach() + (A - A.detach())  # value relu(A), derivative 1
    gi = torch.autograd.grad(upstream * F.cross_entropy(H @ ws[2] + ws[3], y), ws)
    cands["no_relu_mask"] = (
        "It looks like the ReLU mask is missing: the gradient must be zero where A = X @ W1 + b1 is negative.",
        dict(zip(KEYS, gi)),
    )
    ws = [t.clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    A = X @ ws[0] + ws[1]
    H = torch.relu(A).detach() + (A - A.detach()) * (A.detach() <= 0)  # inverted mask
    gi = torch.autograd.grad(upstream * F.cross_entropy(H @ ws[2] + ws[3], y), ws)
    cands["mask_inverted"] = (
        "It looks like the ReLU mask is inverted: the gradient must flow where A = X @ W1 + b1 is positive "
        "and be zero where it is negative.",
        dict(zip(KEYS, gi)),
    )
    cands["not_averaged"] = (
        "It looks like the gradient is n times too large: the loss is a mean over the n examples, so dL/dZ "
        "carries a factor 1/n.",
        {k: g[k] * n for k in KEYS},
    )
    cands["bias_mean"] = (
        "It looks like the bias gradients are n times too small: dL/dZ already carries the 1/n, so a bias "
        "gradient sums (not averages) over the batch.",
        {k: g[k] / n if k.startswith("b") else g[k] for k in KEYS},
    )
    if n > 1:
        wrong_dim = _naive_grads(*(t.to(D64) for t in (X,)), y, *(t.to(D64) for t in (W1, b1, W2, b2)), softmax_dim=0)
        cands["softmax_wrong_dim"] = (
            "It looks like the softmax normalises over the batch (dim 0) instead of over each example's C "
            "classes (dim 1).",
            {k: upstream * wrong_dim[k].to(g[k].dtype) for k in KEYS},
        )
    if X.dtype == D64:
        narrow = _naive_grads(X, y, W1, b1, W2, b2, softmax_dtype=torch.float32)
        cands["float32_softmax"] = (
            "It looks like part of the computation (the softmax, say) ran in float32: the gradients agree with "
            "float64 to only about 7 significant digits. Keep every step in the inputs' dtype (a tensor created "
            "without dtype=, or a .float(), drops to float32).",
            {k: upstream * narrow[k] for k in KEYS},
        )
    if upstream != 1.0:
        cands["ignores_upstream"] = (
            "It looks like backward ignores the upstream gradient (grad_output); the chain rule multiplies "
            "it into every gradient it returns.",
            {k: g[k] / upstream for k in KEYS},
        )

    def same(a, b):
        return all(torch.allclose(a[k], b[k], rtol=1e-9, atol=1e-12) for k in KEYS)

    clash = {a for a in cands for b in cands if a != b and same(cands[a][1], cands[b][1])}
    cands = {key: v for key, v in cands.items() if key not in clash and not same(v[1], g)}
    return {k: {key: (msg, d[k]) for key, (msg, d) in cands.items()} for k in KEYS}


def _check_grads(got, problem, name, upstream=1.0, rtol=1e-10, atol=1e-12, expected=None, hint=None, extra=None):
    expected = expected or _torch_grads(*problem, upstream=upstream)
    wrong = _wrong_grads(*problem, upstream=upstream)
    for k, more in (extra or {}).items():
        wrong[k] = {**more, **wrong[k]}
    for k in KEYS:
        g = got[k]
        if (
            isinstance(g, torch.Tensor)
            and g.dim() == 2
            and g.shape != expected[k].shape
            and g.shape == expected[k].T.shape
        ):
            fail(
                f"The gradient for {k} from {name} has shape {tuple(g.shape)}, the transpose of "
                f"{k}'s shape {tuple(expected[k].shape)}. A parameter's gradient has the "
                f"parameter's own shape (here {k} is stored (in, out), not like nn.Linear.weight).",
                misconception="transposed_layout",
            )
        assert_close(
            g,
            expected[k],
            rtol=rtol,
            atol=atol,
            name=f"the gradient for {k} from {name}",
            misconceptions=wrong[k],
            hint=hint,
        )


def _as_grad_dict(out, call):
    check(isinstance(out, dict), f"`{call}` should return a dict, got {type(out).__name__}.")
    missing = [k for k in KEYS if k not in out]
    check(not missing, f"`{call}` returned a dict without the keys {missing}; expected exactly {list(KEYS)}.")
    return out


# ---------------------------------------------------------------- forward


@pytest.mark.rules("forward", "inputs_unmodified")
@pytest.mark.points(1)
def test_forward(student):
    """mlp_forward gives the logits (float64, float32, n = 1, inputs untouched)"""
    for n, d, h, C, seed, dtype in [(8, 5, 7, 4, 1, D64), (1, 3, 6, 2, 2, D64), (6, 4, 5, 3, 3, F32)]:
        X, y, W1, b1, W2, b2 = _problem(n, d, h, C, seed, dtype)
        sent = [t.clone() for t in (X, W1, b1, W2, b2)]
        call = student.call_detailed("mlp_forward", X, W1, b1, W2, b2)
        expected = torch.relu(X @ W1 + b1) @ W2 + b2
        tol = (1e-10, 1e-12) if dtype == D64 else (1e-5, 1e-6)
        assert_close(
            call.value,
            expected,
            rtol=tol[0],
            atol=tol[1],
            name=f"the output of mlp_forward for n={n}, d={d}, h={h}, C={C} ({dtype})",
            misconceptions={
                "relu_on_logits": (
                    "It looks like ReLU is also applied to the output layer; the logits Z must not be clamped.",
                    torch.relu(expected),
                ),
                "no_hidden_relu": ("It looks like the ReLU between the layers is missing.", (X @ W1 + b1) @ W2 + b2),
            },
        )
        for name, before, after in zip(("X", "W1", "b1", "W2", "b2"), sent, call.args):
            check(
                torch.equal(before, after) and before.stride() == after.stride(),
                f"mlp_forward modified its input {name} in place; inputs must not change.",
                misconception="modifies_input",
            )


# ---------------------------------------------------------------- backward


@pytest.mark.rules("backward")
@pytest.mark.points(1.5)
def test_backward_values(student):
    """mlp_backward gives the four gradients (float64, tight tolerance)"""
    for n, d, h, C, seed in [(10, 6, 8, 5, 11), (7, 4, 9, 3, 12)]:
        problem = _problem(n, d, h, C, seed)
        sent = [t.clone() for t in problem]
        call = student.call_detailed("mlp_backward", *problem)
        got = _as_grad_dict(call.value, "mlp_backward(X, y, W1, b1, W2, b2)")
        _check_grads(got, problem, f"mlp_backward for n={n}, d={d}, h={h}, C={C} (float64)")
        for name, before, after in zip(("X", "y", "W1", "b1", "W2", "b2"), sent, call.args):
            check(
                torch.equal(before, after) and before.stride() == after.stride(),
                f"mlp_backward modified its input {name} in place; inputs must not change.",
                misconception="modifies_input",
            )


@pytest.mark.rules("backward")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_backward_without_autograd(student, sandbox):
    """mlp_backward works with gradient recording off, float32 kept (advice: 0 points)"""
    # Whether recording was off exists only in the student's process (torch.enable_grad() inside undoes the
    # judge's no_grad()): advice, worth nothing (issue 43); the values carry the points.
    problem = _problem(9, 5, 6, 4, 21, F32)
    info = sandbox.probe("backward_no_grad", *problem)
    if info["type"] == "error":
        _backward_error(info["error"], problem, "under torch.no_grad() with inputs that do not require grad")
    check(info["type"] == "dict", f"mlp_backward should return a dict, got {info['type']}.")
    got = _as_grad_dict(info["value"], "mlp_backward(X, y, W1, b1, W2, b2)")
    for k in KEYS:
        check(isinstance(got[k], torch.Tensor), f"mlp_backward(...)[{k!r}] should be a tensor, got {got[k]}.")
    _check_grads(got, problem, "mlp_backward under torch.no_grad() (float32)", rtol=1e-4, atol=1e-5)


def _same_as(got, want):
    """``got`` has exactly ``want``'s non-finite entries in every gradient and its values elsewhere, and some
    are finite: an all-NaN result fits every formula that gives NaN and proves none (issue 44)."""
    if not all(isinstance(got.get(k), torch.Tensor) and got[k].shape == want[k].shape for k in KEYS):
        return False
    if not all(torch.equal(~torch.isfinite(got[k].double()), ~torch.isfinite(want[k].double())) for k in KEYS):
        return False
    finite = [k for k in KEYS if bool(torch.isfinite(want[k]).any())]
    return bool(finite) and all(torch.allclose(got[k].double()[torch.isfinite(want[k])],
                                               want[k].double()[torch.isfinite(want[k])], rtol=1e-6, atol=1e-9)
                                for k in finite)


def _unshifted_fits(student, dtype):
    """Whether mlp_backward gives what the unshifted softmax gives on logits where only the first example's
    are huge: the formula's footprint there is partial (NaN in that example's columns only), so matching it is
    evidence, where all-NaN on all-huge logits is not."""
    X, y, W1, b1, W2, b2 = _problem(6, 4, 5, 3, 35, dtype)
    X = X.clone()
    X[0] *= 3000.0
    problem = [X, y, W1, b1, W2, b2]
    try:
        got = student.mlp_backward(*problem)
    except Exception:  # noqa: BLE001 - no evidence either way
        return False
    return isinstance(got, dict) and _same_as(got, _naive_grads(*problem, shift=False))


@pytest.mark.rules("backward")
@pytest.mark.points(1)
def test_backward_stable(student):
    """mlp_backward stays finite and right when the logits are in the thousands"""
    for dtype, scale in [(D64, 3000.0), (F32, 400.0)]:
        problem = _problem(6, 4, 5, 3, 31, dtype, scale=scale)
        X, y, W1, b1, W2, b2 = problem
        Z = torch.relu(X @ W1 + b1) @ W2 + b2
        assert Z.abs().max() > (800 if dtype == D64 else 100), "grader bug: the logits are not large enough"
        got = _as_grad_dict(student.mlp_backward(*problem), "mlp_backward(X, y, W1, b1, W2, b2)")
        fits = None  # worked out at the first non-finite gradient
        for k in KEYS:
            g = got[k]
            if isinstance(g, torch.Tensor) and not bool(torch.isfinite(g).all()):
                bad = ~torch.isfinite(g)
                fits = _unshifted_fits(student, dtype) if fits is None else fits
                fail(
                    f"mlp_backward returned non-finite values (nan or inf) in {int(bad.sum())} entries of the "
                    f"gradient for {k} when the largest logit is {Z.max().item():.0f} and the smallest "
                    f"{Z.min().item():.0f} ({dtype})."
                    + (
                        " This is what exp(Z) / exp(Z).sum() gives without a shift: exp of the largest "
                        "logits overflows to inf (and inf / inf is nan). Shift each row of Z by its maximum."
                        if fits
                        else f" The expected gradient for {k} is finite everywhere on these inputs."
                    ),
                    misconception="unstable_exp" if fits else "",
                )
        big = max(1.0, max(v.abs().max().item() for v in _torch_grads(*problem).values()))
        tol = (1e-9, 1e-12 * big) if dtype == D64 else (1e-4, 1e-5 * big)
        unshifted = _naive_grads(*problem, shift="log")
        message = (
            "This is what log-softmax computed as Z - log(exp(Z).sum()) gives without a shift: exp of "
            "the largest logits overflows to inf inside the log, so their probabilities come out 0. "
            "Shift each row of Z by its maximum first (or use logsumexp)."
        )
        _check_grads(
            got,
            problem,
            f"mlp_backward with large logits ({dtype})",
            rtol=tol[0],
            atol=tol[1],
            hint=f"This test's logits Z = relu(X @ W1 + b1) @ W2 + b2 are in the thousands (largest "
            f"{Z.max().item():.0f}, smallest {Z.min().item():.0f}); the expected gradients come from autograd "
            "in float64.",
            extra={k: {"unstable_exp": (message, unshifted[k])} for k in KEYS},
        )


@pytest.mark.rules("backward")
@pytest.mark.points(1)
def test_backward_edge_cases(student):
    """mlp_backward for n = 1, C = 2, and with pre-activations exactly 0"""
    problem = _problem(1, 3, 4, 2, 41)
    got = _as_grad_dict(student.mlp_backward(*problem), "mlp_backward(X, y, W1, b1, W2, b2)")
    _check_grads(got, problem, "mlp_backward for one example (n=1) and two classes (C=2)")
    # Exact zeros in A: either subgradient of ReLU at 0 is accepted.
    X, y, W1, b1, W2, b2 = _problem(5, 3, 4, 3, 42)
    X = X.clone()
    X[1] = 0.0
    b1 = b1.clone()
    b1[::2] = 0.0
    problem = [X, y, W1, b1, W2, b2]
    A = X @ W1 + b1
    assert (A == 0).any(), "grader bug: no pre-activation is exactly 0"
    got = _as_grad_dict(student.mlp_backward(*problem), "mlp_backward(X, y, W1, b1, W2, b2)")
    below = _torch_grads(*problem)  # derivative 0 at A == 0
    ws = [t.clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    A2 = X @ ws[0] + ws[1]
    mask = (A2.detach() >= 0).to(D64)
    H = A2 * mask  # derivative 1 at A == 0
    above = dict(zip(KEYS, torch.autograd.grad(F.cross_entropy(H @ ws[2] + ws[3], y), ws)))
    ok = all(
        isinstance(got[k], torch.Tensor) and got[k].shape == below[k].shape and got[k].dtype == D64 for k in KEYS
    ) and (
        all(torch.allclose(got[k], below[k], rtol=1e-10, atol=1e-12) for k in KEYS)
        or all(torch.allclose(got[k], above[k], rtol=1e-10, atol=1e-12) for k in KEYS)
    )
    if not ok:
        _check_grads(
            got,
            problem,
            "mlp_backward with some pre-activations exactly 0 (either ReLU subgradient at 0 is accepted)",
            expected=below,
        )


# ---------------------------------------------------------------- mlp_loss


@pytest.mark.rules("loss_function")
@pytest.mark.points(1)
def test_loss_value(student):
    """mlp_loss returns the mean cross-entropy (float64 and float32)"""
    for n, d, h, C, seed, dtype in [(8, 4, 6, 5, 51, D64), (5, 3, 4, 3, 52, F32)]:
        problem = _problem(n, d, h, C, seed, dtype)
        X, y, W1, b1, W2, b2 = problem
        Z = torch.relu(X @ W1 + b1) @ W2 + b2
        tol = (1e-10, 1e-12) if dtype == D64 else (1e-5, 1e-6)
        assert_close(
            student.mlp_loss(*problem),
            F.cross_entropy(Z, y),
            rtol=tol[0],
            atol=tol[1],
            name=f"the value of mlp_loss for n={n} ({dtype})",
            misconceptions={
                "sum_reduction": (
                    "It looks like the loss is summed over the batch instead of averaged.",
                    F.cross_entropy(Z, y, reduction="sum"),
                )
            },
        )


def _backward_error(err, problem, when):
    y, C = problem[1], problem[4].shape[1]
    if "must match the size" in err and int(y.max()) + 1 < C:
        fail(
            f"mlp_backward failed {when}: {err}. The largest target here is {int(y.max())}, below C - 1 = "
            f"{C - 1}: F.one_hot(y) without num_classes makes only max(y) + 1 columns. Pass num_classes=C.",
            misconception="one_hot_num_classes",
        )
    if "does not require grad" in err or "does not have a grad_fn" in err:
        fail(
            f"mlp_backward failed {when}: {err}. Autograd records nothing under torch.no_grad(): derive the "
            "gradients by hand with tensor operations.",
            misconception="uses_autograd",
        )
    fail(f"mlp_backward failed {when}: {err}.")


def _loss_info(sandbox, problem, upstream, need_grads=True):
    info = sandbox.probe("loss_and_grads", *problem, upstream)
    check(info["type"] == "Tensor", f"mlp_loss should return a tensor, got {info['type']}.")
    check(
        info["requires_grad"],
        "mlp_loss returned a tensor that does not require grad although W1, b1, W2, b2 do: "
        "it is not connected to the weights through autograd.",
    )
    if need_grads and info["grad_error"] is not None:
        err = info["grad_error"]
        if "incorrect number of gradients" in err:
            fail(
                f"Backpropagating through mlp_loss failed: {err}. A Function's backward must return one "
                "gradient (or None) per input of forward, in the same order: here six (X, y, W1, b1, W2, b2), "
                "None for X and y.",
                misconception="backward_arity",
            )
        _backward_error(err, problem, "while backpropagating through mlp_loss")
    return info


@pytest.mark.rules("loss_function")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_loss_is_custom_function(student, sandbox):
    """mlp_loss is built with a custom torch.autograd.Function (advice: 0 points)"""
    # The graph's shape exists only in the student's process, and says nothing of who computes the derivative
    # (a custom Function's backward may call torch.autograd.grad): advice, worth nothing (issue 43).
    info = _loss_info(sandbox, _problem(4, 3, 5, 3, 61), 1.0, need_grads=False)
    check(
        info["custom_function"] is True,
        "mlp_loss's autograd graph contains no custom torch.autograd.Function (its nodes are "
        f"{info['nodes']}): autograd is differentiating the forward itself. The exercise asks "
        "for a Function subclass whose backward uses your hand derivation.",
        misconception="not_custom_function",
    )
    check(
        info.get("own_custom_node") is True,
        f"mlp_loss's result is not the output of your custom Function ({info.get('own_node_problem')}): "
        "the loss must be what YourFunction.apply(X, y, W1, b1, W2, b2) returns, so that its backward "
        "computes the weights' gradients (nothing applied after it, and the weights passed to it directly).",
        misconception="not_custom_function",
    )


@pytest.mark.rules("loss_function")
@pytest.mark.points(1)
def test_loss_backward_upstream(student, sandbox):
    """mlp_loss's backward scales by the upstream gradient"""
    for upstream, (n, d, h, C, seed) in [(3.5, (7, 4, 6, 3, 71)), (-0.25, (3, 5, 4, 4, 72))]:
        problem = _problem(n, d, h, C, seed)
        info = _loss_info(sandbox, problem, upstream)
        grads = info["grads"]
        for k, g in zip(KEYS, grads):
            check(g is not None, f"torch.autograd.grad through mlp_loss gave no gradient for {k}.")
        _check_grads(
            dict(zip(KEYS, grads)),
            problem,
            f"torch.autograd.grad({upstream} * mlp_loss(...), [W1, b1, W2, b2])",
            upstream=upstream,
        )


@pytest.mark.rules("loss_function")
@pytest.mark.points(1)
def test_loss_finite_differences(student, sandbox):
    """mlp_loss's gradients agree with finite differences of its values (float64)"""
    problem = _problem(5, 3, 4, 3, 81, margin=1e-2)
    X, y = problem[0], problem[1]
    weights = problem[2:]
    info = _loss_info(sandbox, problem, 1.0)
    analytic = info["grads"]
    for k, g in zip(KEYS, analytic):
        check(g is not None, f"torch.autograd.grad through mlp_loss gave no gradient for {k}.")
    for i, (k, w) in enumerate(zip(KEYS, weights)):

        def value(v, i=i):
            ws = list(weights)
            ws[i] = v
            return student.mlp_loss(X, y, *ws)

        gradcheck(
            value,
            [w],
            [analytic[i]],
            eps=1e-6,
            atol=1e-5,
            rtol=1e-3,
            name=f"the gradient for {k} that mlp_loss's backward returns",
        )


GENERATED = st.tuples(
    st.integers(1, 9),  # n
    st.integers(1, 6),  # d
    st.integers(1, 7),  # h
    st.integers(2, 6),  # C
    st.sampled_from([D64, F32]),
    st.sampled_from(["contiguous", "transposed", "ties", "targets_miss_last_class"]),
    st.integers(0, 2**32 - 1),
)


def _generated_problem(n, d, h, C, dtype, layout, seed):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=D64)
    W1 = torch.randn(d, h, generator=g, dtype=D64) / d**0.5
    b1 = 0.5 * torch.randn(h, generator=g, dtype=D64)
    W2 = torch.randn(h, C, generator=g, dtype=D64) / h**0.5
    b2 = 0.5 * torch.randn(C, generator=g, dtype=D64)
    y = torch.randint(0, C, (n,), generator=g)
    label = f"n={n}, d={d}, h={h}, C={C} ({str(dtype)[6:]})"
    if layout == "ties":  # a zero example and zero biases: some A are exactly 0
        X[0] = 0.0
        b1[::2] = 0.0
        label += " with some pre-activations exactly 0 (either ReLU subgradient is accepted)"
    if layout == "targets_miss_last_class":
        y = torch.randint(0, max(1, C - 1), (n,), generator=g)
        label += f", targets {y.tolist()} never reaching class {C - 1}"
    X, W1, b1, W2, b2 = (t.to(dtype) for t in (X, W1, b1, W2, b2))
    if layout == "transposed":
        X, W1, W2 = (t.T.contiguous().T for t in (X, W1, W2))
        label += ", X, W1 and W2 given as non-contiguous (transposed) views"
    return label, [X, y, W1, b1, W2, b2]


def _either_subgradient(problem):
    X, y, W1, b1, W2, b2 = problem
    ws = [t.to(D64).clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    A = X.to(D64) @ ws[0] + ws[1]
    H = A * (A.detach() >= 0).to(D64)
    above = dict(zip(KEYS, torch.autograd.grad(F.cross_entropy(H @ ws[2] + ws[3], y), ws), strict=True))
    return above


@pytest.mark.rules("backward")
@pytest.mark.points(2)
def test_backward_generated(sandbox):
    """mlp_backward agrees with autograd on generated sizes, dtypes, layouts and ReLU ties"""
    cases = [_generated_problem(*args) for args in draw(GENERATED, 20, "mlp_backward/generated v1")]
    infos = sandbox.probe("backward_many", [p for _, p in cases], False)
    check(isinstance(infos, list) and len(infos) == len(cases), "grader bug: backward_many replied badly")
    failures = []
    for (label, problem), info in zip(cases, infos, strict=True):
        try:
            if info["type"] == "error":
                _backward_error(info["error"], problem, f"for {label}")
            check(info["type"] == "dict", f"mlp_backward should return a dict, got {info['type']}.")
            got = _as_grad_dict(info["value"], "mlp_backward(X, y, W1, b1, W2, b2)")
            tol = (1e-9, 1e-12) if problem[0].dtype == D64 else (1e-4, 1e-5)
            ref64 = [t.to(D64) if t.is_floating_point() else t for t in problem]
            below = {k: v.to(problem[0].dtype) for k, v in _torch_grads(*ref64).items()}
            above = {k: v.to(problem[0].dtype) for k, v in _either_subgradient(problem).items()}
            if all(
                isinstance(got[k], torch.Tensor)
                and got[k].shape == above[k].shape
                and got[k].dtype == above[k].dtype
                and torch.allclose(got[k].to(D64), above[k].to(D64), rtol=tol[0], atol=tol[1])
                for k in KEYS
            ):
                continue
            _check_grads(got, problem, f"mlp_backward for {label}", rtol=tol[0], atol=tol[1], expected=below)
        except Failure as e:
            failures.append(e)
    if failures:  # the first that names its cause, else the first
        raise next((e for e in failures if e.misconception), failures[0])


# ---------------------------------------------------------------- the conventions

CONVENTIONS = st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(2, 6), st.integers(2, 5),
                        st.sampled_from([D64, F32]), st.integers(0, 2**31 - 1))
NAMES = ["X", "y", "W1", "b1", "W2", "b2"]


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_functions_leave_inputs_and_settings_as_found(student, sandbox):
    """mlp_forward, mlp_backward and mlp_loss leave their inputs and torch's global settings as found"""
    for n, d, h, C, dtype, seed in draw(CONVENTIONS, 4, "mlp_backward/conventions v1"):
        X, y, W1, b1, W2, b2 = _problem(max(n, 2), d, h, C, seed % 100000, dtype, margin=0.0)
        n = max(n, 2)
        kind = f"n={n}, d={d}, h={h}, C={C} ({str(dtype)[6:]})"
        as_found(sandbox, student.mlp_forward, X, W1, b1, W2, b2, names=["X", "W1", "b1", "W2", "b2"],
                 call=f"mlp_forward(X, W1, b1, W2, b2) for {kind}")
        # called as found (recording on): whether it works under no_grad() is advice (issue 43), not points here
        as_found(sandbox, student.mlp_backward, X, y, W1, b1, W2, b2, names=NAMES,
                 call=f"mlp_backward(X, y, W1, b1, W2, b2) for {kind}")
        as_found(sandbox, student.mlp_loss, X, y, W1, b1, W2, b2, names=NAMES, requires_grad=NAMES[2:],
                 call=f"mlp_loss(X, y, W1, b1, W2, b2) for {kind}, the weights leaves requiring grad")
