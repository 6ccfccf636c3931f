"""Hidden suite of `softmax_grad` (the softmax cross-entropy gradient by hand).

Every call runs in the sandbox under ``torch.no_grad()`` (the contract's
"without autograd"), several inputs per call. The truth comes from torch's
autograd in float64, in the judge. When a result is wrong, the diagnosis is
given only when the returned values match what a known-wrong formula gives on
the same inputs (computed here too); a non-finite result is described by which
rows went wrong and their largest logits, and explained only when the unshifted
or the batch-shifted softmax reproduces exactly its non-finite entries.
"""

import re

import pytest
import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.judge import as_found, assert_close, check, fail
from autograder.judge.generated import draw

F64 = dict(rtol=1e-10, atol=1e-13)
F32 = dict(rtol=1e-5, atol=1e-6)


def _dt(t):
    return str(t.dtype).removeprefix("torch.")


def _expected(logits, target):
    """The truth, from torch's autograd in float64, cast back to the input dtype."""
    z = logits.detach().to(torch.float64).clone().requires_grad_(True)
    F.cross_entropy(z, target).backward()
    return z.grad.to(logits.dtype)


def _rows(logits):
    return logits.reshape(-1, logits.shape[-1])


def _naive(logits, target):
    """exp(z) / sum exp(z) without any shift, in the input's dtype (overflows and underflows)."""
    z = _rows(logits)
    e = torch.exp(z)
    p = e / e.sum(dim=1, keepdim=True)
    p[torch.arange(z.shape[0]), target.reshape(-1)] -= 1
    return (p / z.shape[0]).reshape(logits.shape)


def _global_shift(logits, target):
    """Softmax stabilised with the largest logit of the whole batch instead of each row's."""
    z = _rows(logits)
    e = torch.exp(z - z.max())
    p = e / e.sum(dim=1, keepdim=True)
    p[torch.arange(z.shape[0]), target.reshape(-1)] -= 1
    return (p / z.shape[0]).reshape(logits.shape)


def _value_misconceptions(logits, target, expected):
    n = logits.shape[0] if logits.dim() == 2 else 1
    c = logits.shape[-1]
    out = {
        "sign_flipped": (
            "The result is the negative of the gradient: d(loss)/d(logits) is softmax minus the one-hot "
            "target, not the other way round.",
            -expected,
        )
    }
    if n > 1:
        out["not_averaged"] = (
            "The gradient is n times too large: the default reduction averages the loss over the n "
            "examples, so the gradient must be averaged too.",
            expected * n,
        )
        out["divided_twice"] = ("This is the gradient divided by n twice.", expected / n)
    if logits.dim() == 1 and c > 1:
        out["divides_by_classes"] = (
            "For unbatched (C,) logits there is a single example: the gradient must not be divided by the "
            "number of classes.",
            expected / c,
        )
    return out


def _same_nonfinite(got, candidate):
    """True when got has exactly candidate's non-finite entries and equals it (loosely) elsewhere."""
    if candidate.shape != got.shape:
        return False
    a, b = got.to(torch.float64), candidate.to(torch.float64)
    bad_a, bad_b = ~torch.isfinite(a), ~torch.isfinite(b)
    if not bad_b.any() or not torch.equal(bad_a, bad_b):
        return False
    return bool(torch.allclose(a[~bad_a], b[~bad_b], rtol=1e-3, atol=1e-4))


def _explain_nonfinite(label, logits, target, got):
    """Say which rows are not finite and why; name the cause only when a known formula reproduces it."""
    bad_rows = (~torch.isfinite(_rows(got.to(torch.float64)))).any(dim=1)
    z = _rows(logits).to(torch.float64)
    row_max = z.max(dim=1).values
    big = 80.0 if logits.dtype == torch.float32 else 700.0
    details = []
    # what each row is, never why it failed: a cause is said below only when a formula reproduces the values
    for i in torch.nonzero(bad_rows).flatten().tolist()[:3]:
        if row_max[i] < z.max() - big:
            why = "its largest logit {:.4g} is far below the batch's largest logit"
        else:
            why = "its largest logit is {:.4g}"
        details.append(f"row {i} ({why.format(row_max[i].item())})")
    n_bad = int((~torch.isfinite(got)).sum())
    head = (
        f"softmax_ce_grad on {label} returned {n_bad} non-finite value(s) (nan or inf), in "
        + "; ".join(details)
        + (" and more" if int(bad_rows.sum()) > 3 else "")
        + "."
    )
    if _same_nonfinite(got, _global_shift(logits, target)) and not _same_nonfinite(got, _naive(logits, target)):
        fail(
            head + " Subtracting one maximum for the whole batch only protects the row that holds it: subtract "
            "each row's own maximum (softmax is unchanged by shifting a row by a constant).",
            misconception="global_max",
        )
    if _same_nonfinite(got, _naive(logits, target)):
        fail(
            head + " This is exactly what exp(logits) / exp(logits).sum() gives without any shift: use a "
            "formulation that exponentiates only numbers at most 0, such as exp(z - z.max(dim, keepdim=True)) "
            "or exp(z - logsumexp(z)).",
            misconception="unstable_exp",
        )
    fail(head + " The expected gradient is finite everywhere on these logits.")


def _run(sandbox, cases, no_grad=False):
    """softmax_ce_grad on every (label, logits, target) (inputs that do not require grad), in one sandbox call;
    under torch.no_grad() only for the advice (whether recording was off is the student's process's word)."""
    replies = sandbox.probe("grads_many", [[lg, t] for _, lg, t in cases], no_grad)
    check(isinstance(replies, list) and len(replies) == len(cases), "grader bug: grads_many replied badly")
    return replies


def _error(label, logits, target, err):
    if "does not require grad" in err or "does not have a grad_fn" in err:
        fail(
            f"softmax_ce_grad on {label} raised {err} when called inside torch.no_grad(), as the contract "
            "grades it. Autograd records nothing there: derive the gradient (softmax minus one-hot, averaged) "
            "and compute it with tensor operations, without backward or torch.autograd.",
            misconception="uses_autograd",
        )
    sizes = {int(s) for s in re.findall(r"\((\d+)\)", err)}
    c = logits.shape[-1]
    if "must match the size" in err and int(target.max()) + 1 < c and sizes == {c, int(target.max()) + 1}:
        fail(
            f"softmax_ce_grad on {label} raised {err}. The largest target here is {int(target.max())}, below "
            f"C - 1 = {c - 1}: F.one_hot(target) without num_classes makes only max(target) + 1 columns. Pass "
            f"num_classes=logits.shape[-1].",
            misconception="one_hot_num_classes",
        )
    if logits.dim() == 1 and ("too many indices" in err or "IndexError" in err):
        fail(
            f"softmax_ce_grad on {label} raised {err}. Unbatched (C,) logits with a 0-d target are one "
            f"example: handle them (for instance by adding a batch dimension of 1 and removing it at the end).",
            misconception="unbatched_unsupported",
        )
    fail(f"softmax_ce_grad on {label} raised {err}.")


def _judge(label, logits, target, reply, tol):
    if "error" in reply:
        _error(label, logits, target, reply["error"])
    got = reply["value"]
    after_logits, after_target = reply["logits"], reply["target"]
    check(
        isinstance(after_logits, torch.Tensor)
        and after_logits.shape == logits.shape
        and after_logits.stride() == logits.stride()
        and torch.equal(after_logits, logits),
        f"softmax_ce_grad modified the caller's logits ({label}) in place. Operations such as `-=`, `/=`, "
        f"`exp_()` or index assignment on `logits` change the caller's tensor; compute on new tensors instead.",
        misconception="modifies_input",
    )
    check(
        isinstance(after_target, torch.Tensor) and torch.equal(after_target, target),
        f"softmax_ce_grad modified the caller's target ({label}) in place.",
        misconception="modifies_input",
    )
    expected = _expected(logits, target)
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and got.dtype != expected.dtype:
        key = (
            "casts_to_float32"
            if got.dtype == torch.float32
            else "upcasts_to_float64"
            if got.dtype == torch.float64
            else ""
        )
        fail(
            f"softmax_ce_grad on {label} returned a {_dt(got)} gradient for {_dt(logits)} logits. Keep the "
            f"input's dtype: compute in logits.dtype (no .float() or .double() without casting back), and make "
            f"any one-hot or constant tensors in that dtype too.",
            misconception=key,
        )
    tensor = isinstance(got, torch.Tensor) and got.is_floating_point() and got.shape == expected.shape
    if tensor and not bool(torch.isfinite(got).all()):
        _explain_nonfinite(label, logits, target, got)
    assert_close(
        got,
        expected,
        **tol,
        name=f"the gradient returned by softmax_ce_grad on {label}",
        misconceptions=lambda: _value_misconceptions(logits, target, expected),
        hint="The expected value is autograd's: z = logits.clone().requires_grad_(True); "
        "F.cross_entropy(z, target).backward(); z.grad.",
    )


def _check_all(sandbox, cases, tol_of):
    for (label, logits, target), reply in zip(cases, _run(sandbox, cases), strict=True):
        _judge(label, logits, target, reply, tol_of(logits))


def _tol(logits):
    return F64 if logits.dtype == torch.float64 else F32


def _tol_huge(logits):
    # Logits of size 1e4 carry an absolute rounding error of about 1e4 * eps of their dtype, which any
    # correct formulation may pass on to the gradient.
    return dict(rtol=1e-8, atol=1e-10) if logits.dtype == torch.float64 else dict(rtol=1e-3, atol=2e-3)


@pytest.mark.rules("gradient")
@pytest.mark.points(1.5)
def test_batched_float64(sandbox):
    """Batched (n, C) float64 logits: exact gradient"""
    cases = []
    for n, c in [(5, 4), (8, 10), (3, 7)]:
        logits = torch.randn(n, c, dtype=torch.float64) * 3
        target = torch.randint(0, c, (n,))
        target[0] = c - 1  # every class count is reachable by F.one_hot without num_classes
        cases.append((f"float64 logits of shape ({n}, {c})", logits, target))
    _check_all(sandbox, cases, _tol)


@pytest.mark.rules("gradient", "keeps_dtype")
@pytest.mark.points(1)
def test_batched_float32_keeps_dtype(sandbox):
    """Batched float32 logits: float32 gradient"""
    cases = []
    for n, c in [(6, 5), (4, 3)]:
        logits = torch.randn(n, c) * 2
        target = torch.randint(0, c, (n,))
        target[-1] = c - 1
        cases.append((f"float32 logits of shape ({n}, {c})", logits, target))
    _check_all(sandbox, cases, _tol)


@pytest.mark.rules("gradient")
@pytest.mark.points(1.5)
def test_unbatched(sandbox):
    """Unbatched (C,) logits with a 0-d target"""
    cases = []
    for c, t, dtype in [(6, 5, torch.float64), (3, 2, torch.float64), (5, 4, torch.float32)]:
        logits = torch.randn(c, dtype=dtype) * 2
        target = torch.tensor(t)
        assert target.dim() == 0, "grader bug: the unbatched target must be 0-d"
        cases.append((f"unbatched {_dt(logits)} logits of shape ({c},) and a 0-d target {t}", logits, target))
    _check_all(sandbox, cases, _tol)


@pytest.mark.rules("gradient")
@pytest.mark.points(1)
def test_edge_sizes(sandbox):
    """Edge sizes: one example, two classes, many classes, targets missing the last class"""
    cases = [
        ("a single example (1, 4)", torch.randn(1, 4, dtype=torch.float64), torch.tensor([3])),
        ("two classes (7, 2)", torch.randn(7, 2, dtype=torch.float64), torch.tensor([0, 1, 1, 0, 1, 0, 0])),
        (
            "1000 classes (3, 1000)",
            torch.randn(3, 1000, dtype=torch.float64) * 4,
            torch.tensor([0, 999, 512]),
        ),
        ("all examples with the same target (4, 3)", torch.randn(4, 3, dtype=torch.float64), torch.tensor([2] * 4)),
        ("tied logits (3, 4), all equal", torch.zeros(3, 4, dtype=torch.float64), torch.tensor([0, 3, 1])),
        (
            "targets that never reach the last class (5, 6)",
            torch.randn(5, 6, dtype=torch.float64),
            torch.tensor([0, 2, 1, 2, 0]),
        ),
    ]
    _check_all(sandbox, cases, _tol)


@pytest.mark.rules("stable")
@pytest.mark.points(2)
def test_numerically_stable(sandbox):
    """Huge logits (+-1e4): finite and correct"""
    cases = [
        (
            "float64 logits of size about 1e4",
            torch.tensor(
                [[1e4, -1e4, 0.0, 3.0], [-1e4, -1e4, -1e4 + 1.0, -1e4 + 2.0], [1e4, 1e4, 1e4 - 0.5, -1e4]],
                dtype=torch.float64,
            ),
            torch.tensor([0, 3, 2]),
        ),
        (
            "float32 logits of size about 1e4",
            torch.tensor([[1e4, 9999.0, -1e4], [-1e4, -1e4 + 1.0, -1e4 + 1.0]], dtype=torch.float32),
            torch.tensor([1, 0]),
        ),
        (
            "float64 unbatched logits of size about 1e4",
            torch.tensor([-1e4, 1e4, 1e4 - 1.0], dtype=torch.float64),
            torch.tensor(2),
        ),
        (
            "float64 logits whose rows all lie near -1e4 (no large positive logit at all)",
            torch.tensor([[-1e4, -1e4 + 3.0, -1e4 + 1.0], [-9990.0, -9995.0, -1e4]], dtype=torch.float64),
            torch.tensor([2, 0]),
        ),
    ]
    _check_all(sandbox, cases, _tol_huge)


@pytest.mark.rules("without_autograd")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_works_inside_no_grad(sandbox):
    """Works inside torch.no_grad(), as a computation without autograd does (advice: 0 points)"""
    # Whether recording was off exists only in the student's process (torch.enable_grad() inside undoes the
    # judge's no_grad()): advice, worth nothing (issue 43); the values carry the points.
    cases = [("(6, 5) float64 logits", torch.randn(6, 5, dtype=torch.float64), torch.tensor([4, 0, 1, 2, 3, 4])),
             ("(5,) float32 unbatched logits", torch.randn(5) * 5, torch.tensor(1))]
    for (label, logits, target), reply in zip(cases, _run(sandbox, cases, no_grad=True), strict=True):
        if "error" in reply:
            _error(label, logits, target, reply["error"])


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(1.5)
def test_without_autograd_and_inputs_unchanged(student, sandbox):
    """Leaves logits, target (a transposed view included) and torch's global settings as found"""
    base = torch.randn(5, 4, dtype=torch.float64) * 5
    cases = [
        ("(6, 5) float64 logits", torch.randn(6, 5, dtype=torch.float64), torch.tensor([4, 0, 1, 2, 3, 4])),
        ("(4, 5) float64 logits given as a transposed (non-contiguous) view", base.T, torch.tensor([3, 0, 1, 3])),
        ("(5,) float32 unbatched logits", torch.randn(5) * 5, torch.tensor(1)),
    ]
    _check_all(sandbox, cases, _tol)
    for label, logits, target in cases:  # as found (recording on): working under no_grad() is advice (issue 43)
        as_found(sandbox, student.softmax_ce_grad, logits, target, names=["logits", "target"],
                 call=f"softmax_ce_grad(logits, target) for {label}")


GENERATED = st.tuples(
    st.integers(1, 9),  # n (0: unbatched)
    st.integers(2, 12),  # C
    st.sampled_from([torch.float64, torch.float32]),
    st.sampled_from([3.0, 1.0, 30.0, 1e3, 1e4]),  # scale of the logits
    st.sampled_from(["contiguous", "transposed", "unbatched", "shifted"]),
    st.integers(0, 2**32 - 1),
)


def _generated_case(n, c, dtype, scale, layout, seed):
    g = torch.Generator().manual_seed(seed)
    if layout == "unbatched":
        logits = (torch.randn(c, generator=g, dtype=torch.float64) * scale).to(dtype)
        target = torch.randint(0, c, (), generator=g)
        return f"unbatched ({c},) {_dt(logits)} logits of scale {scale:g}", logits, target
    logits = torch.randn(n, c, generator=g, dtype=torch.float64) * scale
    if layout == "shifted":  # each row shifted by its own large offset: rows far apart from each other
        logits = logits + (torch.randn(n, 1, generator=g, dtype=torch.float64) * 5e3)
    logits = logits.to(dtype)
    target = torch.randint(0, c, (n,), generator=g)
    label = f"({n}, {c}) {_dt(logits)} logits of scale {scale:g}"
    if layout == "transposed":
        logits = logits.T.contiguous().T
        label += " (a transposed, non-contiguous view)"
    if layout == "shifted":
        label += ", each row shifted by a random offset of size about 5e3"
    return label, logits, target


@pytest.mark.rules("gradient", "stable", "keeps_dtype")
@pytest.mark.points(1.5)
def test_generated_against_autograd(sandbox):
    """Agrees with autograd on generated shapes, dtypes, scales and layouts"""
    cases = [_generated_case(*args) for args in draw(GENERATED, 25, "softmax_grad/generated v1")]

    def tol(logits):
        huge = logits.abs().max().item() > 100
        return _tol_huge(logits) if huge else _tol(logits)

    _check_all(sandbox, cases, tol)
