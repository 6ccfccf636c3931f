"""Hidden suite of `accumulation` (gradient accumulation, scaled right).

The probe builds the model in the sandbox, records every batch that reaches the
model's first layer with a TorchDispatchMode (below any module hook, which
`model[0].forward(X)` would skip), and hands back the gradients and the caller's
X and Y as they are after the call. Which batches the model saw exists only in
the student's process: that test is advice (`in_process`, 0 points); the point
for never holding the whole batch rests on the sandbox's peak memory, measured by
the kernel outside it (`test_never_the_whole_batch_at_once`).
The truth (full-batch gradients) and the known-wrong schemes used for diagnosis
are computed here, in the judge.
"""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.judge import as_found, assert_close, check, fail, manual_seed, review
from autograder.judge.generated import draw

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
    return [(X[s : s + m], Y[s : s + m]) for s in range(0, len(X), m)]


def _wrong_answers(model, X, Y, m, loss_fn, prefill):
    """Judge-side gradients of known-wrong accumulation schemes: {key: (message, {param: grad})}."""
    n = len(X)
    chunks = _chunks(X, Y, m)
    k = len(chunks)
    per_batch = [_grads(model, xb, yb, loss_fn) for xb, yb in chunks]
    names = list(per_batch[0])
    wrong = {}
    wrong["unscaled"] = (
        "Each micro-batch's mean loss was backpropagated unscaled, so the gradients are the sum of the "
        "micro-batch means: weight each micro-batch by its share of the examples (len(xb) / len(X)).",
        {q: sum(g[q] for g in per_batch) for q in names},
    )
    if n % m:
        wrong["divides_by_num_batches"] = (
            "Every micro-batch was weighted by 1 / (number of micro-batches); that is only right when all "
            "micro-batches have the same size, and here the last one is shorter.",
            {q: sum(g[q] for g in per_batch) / k for q in names},
        )
        if n // m:
            wrong["drops_last"] = (
                "The short last micro-batch was skipped: every example must be used once.",
                {q: sum(g[q] for g in per_batch[:-1]) / (n // m) for q in names},
            )
    wrong["divides_by_micro_batch_size"] = (
        "Every micro-batch's mean loss was divided by micro_batch_size: the weight of a micro-batch is its "
        "number of examples divided by len(X), the size of the whole batch.",
        {q: sum(g[q] for g in per_batch) / m for q in names},
    )
    if k > 1:
        wrong["zero_inside_loop"] = (
            "Only the last micro-batch's gradient is left: clearing the gradients inside the micro-batch loop "
            "throws away the earlier micro-batches.",
            {q: per_batch[-1][q] * (len(chunks[-1][0]) / n) for q in names},
        )
    outputs = Y[0].numel() if Y.dtype.is_floating_point and len(Y) else 1
    if outputs > 1:  # an elementwise loss over several outputs per example
        wrong["sums_outputs"] = (
            "The loss was summed over every output of every example (reduction='sum') and divided by the number "
            "of examples: with several outputs per example that is too large by the number of outputs, because "
            "a mean loss averages over the outputs too. Use loss_fn as given and weight each micro-batch by its "
            "share of the examples.",
            _grads(model, X, Y, loss_fn, weight=float(outputs)),
        )
    if prefill is not None:
        full = _grads(model, X, Y, loss_fn)
        wrong["keeps_old_grads"] = (
            "The gradients that were already in .grad before the call were kept and added to: the contract "
            "says they must be discarded (zero them, or set them to None, before accumulating).",
            {q: full[q] + prefill for q in names},
        )
    return _unambiguous(wrong)


def _unambiguous(wrong):
    """Drop candidates that coincide on these inputs (n = 7, m = 3: 1/k and 1/m are the same weight):
    matching one of them would not say which misconception it is."""

    def same(a, b):
        return all(torch.allclose(a[q], b[q], rtol=1e-9, atol=1e-12) for q in a)

    keys = list(wrong)
    clash = {a for a in keys for b in keys if a != b and same(wrong[a][1], wrong[b][1])}
    return {k: v for k, v in wrong.items() if k not in clash}


def _setup(X, Y, m, loss_name=None, sizes=(3, 5, 2), prefill=None):
    manual_seed(int(X.numel() * 7 + m))
    model = _model(sizes)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    return model, state, [list(sizes), state, X, Y, m, loss_name, prefill]


def _runs(sandbox, configs):
    """configs: (label, X, Y, m, loss_name, sizes, prefill); one sandbox call for all of them."""
    prepared = [_setup(X, Y, m, loss, sizes, prefill) for _, X, Y, m, loss, sizes, prefill in configs]
    outs = sandbox.probe("run_many", [p[2] for p in prepared])
    check(isinstance(outs, list) and len(outs) == len(configs), "grader bug: run_many replied badly")
    return [(cfg, model, out) for cfg, (model, _, _), out in zip(configs, prepared, outs, strict=True)]


def _check_inputs(out, X, Y, label):
    for name, sent, after in (("X", X, out["X"]), ("Y", Y, out["Y"])):
        check(
            isinstance(after, torch.Tensor)
            and after.shape == sent.shape
            and after.stride() == sent.stride()
            and after.dtype == sent.dtype
            and torch.equal(after, sent),
            f"accumulate_gradients modified the caller's {name} ({label}); it must leave its inputs alone.",
            misconception="modifies_input",
        )


# The inputs are the same for every submission (fixed data under the per-test seed, Hypothesis drawing once
# per judge process): the truth is computed once per judge process, never from anything the sandbox sent.
_TRUTH = {}


def _fingerprint(t):
    t = t.detach()
    return str(t.dtype), tuple(t.shape), t.contiguous().numpy().tobytes()


def _truth(model, X, Y, m, loss_name, prefill):
    """(full-batch gradients, known-wrong answers) for the judge's model at its initial state on these inputs."""
    key = (
        m,
        loss_name,
        prefill,
        _fingerprint(X),
        _fingerprint(Y),
        tuple((k, _fingerprint(v)) for k, v in model.state_dict().items()),
    )
    if key not in _TRUTH:
        if len(_TRUTH) > 1000:  # bounded, whatever the inputs
            _TRUTH.clear()
        loss_fn = LOSSES[loss_name]
        _TRUTH[key] = (_grads(model, X, Y, loss_fn), _wrong_answers(model, X, Y, m, loss_fn, prefill))
    return _TRUTH[key]


def _check_grads(out, model, X, Y, m, loss_name, prefill, label):
    check(
        out["returned"] is None,
        f"accumulate_gradients should return None (it works through the parameters' .grad); it returned a "
        f"{out['returned']}.",
    )
    expected, wrong = _truth(model, X, Y, m, loss_name, prefill)
    for name, exp in expected.items():
        got = out["grads"][name]
        if got is None:
            fail(
                f"After accumulate_gradients ({label}), the .grad of parameter `{name}` is None: every "
                f"parameter should hold the full-batch gradient."
            )
        assert_close(
            got,
            exp,
            **TOL,
            name=f"the .grad of parameter `{name}` ({label})",
            misconceptions={key: (msg, d[name]) for key, (msg, d) in wrong.items()},
            hint="Compare with a full-batch loss_fn(model(X), Y).backward() in float64; the mean over all "
            "examples is a weighted sum of micro-batch means.",
        )


def _check_forwards(out, X, m, label):
    n = len(X)
    check(
        out.get("tampered") is None and isinstance(out.get("forward_inputs"), list),
        f"The grader could not watch the model's forward passes ({label}): "
        f"{out.get('tampered') or 'its measurement is missing'}. Leave torch's dispatch modes as PyTorch "
        "defines them.",
    )
    seen = out["forward_inputs"]
    sizes = [len(x) for x in seen]
    check(len(seen) > 0, f"The model's forward was never called ({label}).")
    if m < n and any(s == n for s in sizes):
        fail(
            f"With n = {n} and micro_batch_size = {m}, the model was called on the whole batch at once (forward "
            f"batch sizes {sizes}). Gradient accumulation exists to avoid exactly that; every forward must see "
            f"at most micro_batch_size examples (compute nothing on the full batch, not even a loss for "
            f"logging).",
            misconception="full_batch",
        )
    check(
        all(s <= m for s in sizes),
        f"With micro_batch_size = {m}, the model saw batches of sizes {sizes}; each forward must see at most "
        f"{m} examples.",
    )
    expected_sizes = [min(m, n - s) for s in range(0, n, m)]
    if sizes == expected_sizes and not torch.equal(torch.cat(seen), X):
        rows = torch.cat(seen)
        permuted = rows.shape == X.shape and sorted(map(tuple, rows.tolist())) == sorted(map(tuple, X.tolist()))
        fail(
            f"With n = {n} and micro_batch_size = {m}, the micro-batches had the right sizes {sizes}, but the model "
            "did not see X's rows in order: "
            + ("every row once, in another order (a shuffled DataLoader or a random permutation). The contract "
               "asks for consecutive micro-batches X[0:m], X[m:2m], ... in order." if permuted else
               "other rows than X[0:m], X[m:2m], ... (check the slicing)."),
            misconception="shuffled" if permuted else "",
        )
    check(
        sizes == expected_sizes and torch.equal(torch.cat(seen), X),
        f"With n = {n} and micro_batch_size = {m}, the model saw batches of sizes {sizes} (expected "
        f"{expected_sizes}). The contract asks for consecutive micro-batches X[0:m], X[m:2m], ... in order, "
        f"each example exactly once, the last one possibly shorter.",
        misconception="drops_last"
        if sizes == expected_sizes[: len(sizes)] and len(sizes) < len(expected_sizes)
        else "",
    )


def _data(n, d_in=3, d_out=2, classes=None):
    X = torch.randn(n, d_in, dtype=torch.float64)
    Y = torch.randint(0, classes, (n,)) if classes else torch.randn(n, d_out, dtype=torch.float64)
    return X, Y


def _grade(sandbox, configs, forwards=False):
    for (label, X, Y, m, loss, _, prefill), model, out in _runs(sandbox, configs):
        _check_inputs(out, X, Y, label)
        if forwards:
            _check_forwards(out, X, m, label)
        _check_grads(out, model, X, Y, m, loss, prefill, label)


def _cfg(n, m, loss=None, sizes=(3, 5, 2), prefill=None, label=None, classes=None):
    X, Y = _data(n, sizes[0], sizes[2], classes)
    return (label or f"n = {n}, micro_batch_size = {m}", X, Y, m, loss, sizes, prefill)


@pytest.mark.rules("full_batch_gradient")
@pytest.mark.points(1.5)
def test_divisible_mse(sandbox):
    """Micro-batches that divide the batch (default F.mse_loss)"""
    _grade(sandbox, [_cfg(12, 4), _cfg(9, 3)])


@pytest.mark.rules("full_batch_gradient", "micro_batches")
@pytest.mark.points(1.5)
def test_short_last_micro_batch(sandbox):
    """A shorter last micro-batch is weighted by its size"""
    _grade(
        sandbox,
        [
            _cfg(n, m, label=f"n = {n}, micro_batch_size = {m}: the last micro-batch has {n % m} example(s)")
            for n, m in [(10, 4), (7, 5), (11, 2)]
        ],
    )


@pytest.mark.rules("full_batch_gradient")
@pytest.mark.points(1)
def test_other_loss_functions(sandbox):
    """Other mean losses passed as loss_fn (cross-entropy, L1)"""
    _grade(
        sandbox,
        [
            _cfg(7, 3, "cross_entropy", (3, 6, 4), classes=4, label="loss_fn = F.cross_entropy, n = 7, m = 3"),
            _cfg(8, 3, "l1", (3, 4, 3), label="loss_fn = F.l1_loss, n = 8, micro_batch_size = 3"),
        ],
    )


@pytest.mark.rules("discards_old_grad")
@pytest.mark.points(1.5)
def test_old_gradients_discarded(sandbox):
    """Gradients already in .grad before the call are discarded"""
    _grade(
        sandbox,
        [
            _cfg(n, m, prefill=3.0, label=f"n = {n}, micro_batch_size = {m}, with stale values in .grad")
            for n, m in [(8, 4), (6, 4)]
        ],
    )


# A model wide enough that one (n, hidden) activation of the whole batch is 32 MiB, against 1 MiB per
# micro-batch: the kernel's peak for the sandbox tells the two apart from outside the student's process.
WIDE, WIDE_N, WIDE_M = (4, 4096, 1), 1024, 32


def _review_watch(sandbox, X, Y, grown, whole):
    """Flag for review when the advice's evidence (the sandbox's own watch of the forwards, on a small model)
    says micro-batches while the kernel measured the whole batch's memory: no point moves."""
    watched = sandbox.probe("run_accumulation", *_setup(X[:96], Y[:96], WIDE_M, None, (4, 8, 1))[2])
    sizes = [len(x) for x in watched.get("forward_inputs") or []]
    if sizes and all(s <= WIDE_M for s in sizes):
        review(f"accumulation: the sandbox reported forwards of at most {WIDE_M} examples, but the sandbox's "
               f"peak memory grew by {grown / 2**20:.0f} MiB during the call, as much as the whole batch's "
               f"activations ({whole / 2**20:.0f} MiB each)")


@pytest.mark.rules("micro_batches")
@pytest.mark.points(1)
@pytest.mark.outside("cgroup peak memory")
@pytest.mark.timeout(60)
def test_never_the_whole_batch_at_once(sandbox):
    """Right gradients on a wide model without ever holding the whole batch's activations (peak memory)"""
    X, Y = _data(WIDE_N, WIDE[0], WIDE[2])
    label = f"n = {WIDE_N}, micro_batch_size = {WIDE_M}, a model of width {WIDE[1]}"
    model, state, _ = _setup(X, Y, WIDE_M, None, WIDE)
    # first use of these shapes (thread pools, the allocator's arenas) outside the measured call
    sandbox.probe("run_plain", list(WIDE), state, X[: 2 * WIDE_M], Y[: 2 * WIDE_M], WIDE_M)
    out, grown = sandbox.peak_memory("run_plain", list(WIDE), state, X, Y, WIDE_M)
    check(out["returned"] is None, f"accumulate_gradients should return None; it returned a {out['returned']}.")
    # the truth, in slices of 256 rows: the mean loss is the slices' means weighted by their sizes, and the
    # judge's own memory stays small (one slice's activations)
    model.zero_grad(set_to_none=True)
    for xs, ys in _chunks(X, Y, 256):
        (F.mse_loss(model(xs), ys) * (len(xs) / len(X))).backward()
    for name, exp in {k: p.grad.clone() for k, p in model.named_parameters()}.items():
        got = out["grads"][name]
        check(got is not None, f"After accumulate_gradients ({label}), the .grad of `{name}` is None.")
        assert_close(got, exp, **TOL, name=f"the .grad of parameter `{name}` ({label})")
    whole = WIDE_N * WIDE[1] * 8  # one float64 activation of the whole batch
    if grown >= whole // 2:
        _review_watch(sandbox, X, Y, grown, whole)
        fail(f"With n = {WIDE_N} and micro_batch_size = {WIDE_M} on a model of width {WIDE[1]}, the memory your "
             f"code held grew by {grown / 2**20:.0f} MiB during the call, while one micro-batch's activations are "
             f"{whole * WIDE_M / WIDE_N / 2**20:.0f} MiB and the whole batch's {whole / 2**20:.0f} MiB: the whole "
             "batch's graph was alive at once (a forward over all of X, or one backward over the summed "
             "micro-batch losses). Run forward and backward on each micro-batch before the next one.",
             misconception="full_batch")


@pytest.mark.rules("micro_batches")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_runs_micro_batches_in_order(sandbox):
    """The model sees micro-batches of at most micro_batch_size, in order (advice: 0 points)"""
    # Which batches reached the model exists only in the student's process (a clone of the first layer's
    # weight escapes the watch): advice, worth nothing (issue 43); the peak memory test carries the point.
    configs = [_cfg(10, 3), _cfg(8, 4)]
    for (label, X, _, m, _, _, _), _, out in _runs(sandbox, configs):
        _check_forwards(out, X, m, label)
        _check_backward_per_micro_batch(out, X, m, label)


def _check_backward_per_micro_batch(out, X, m, label):
    """Each micro-batch's backward runs before the next micro-batch's forward: one backward over the summed
    micro-batch losses holds every micro-batch's graph alive at once, as the whole batch's forward would."""
    order = out.get("order")
    check(isinstance(order, str), f"The grader could not watch the backward passes ({label}).")
    forwards = [run for run in order.split("B") if run]  # forward ops between two backward passes
    expected = math.ceil(len(X) / m)
    if len(X) > m and len(forwards) < expected:
        fail(f"With n = {len(X)} and micro_batch_size = {m}, the {expected} micro-batches' forwards ran in "
             f"{len(forwards)} stretch(es) with no backward pass between them: the graphs of several micro-batches "
             "were alive at once (for example one backward() over the summed micro-batch losses). Run each "
             "micro-batch's backward before the next micro-batch's forward.")


@pytest.mark.rules("full_batch_gradient", "micro_batches")
@pytest.mark.points(0.5)
def test_edge_micro_batch_sizes(sandbox):
    """Edge sizes: micro_batch_size 1, equal to and larger than the batch"""
    _grade(sandbox, [_cfg(5, 1), _cfg(6, 6), _cfg(4, 10), _cfg(1, 3)])


GENERATED = st.tuples(
    st.integers(1, 13),  # n
    st.integers(1, 15),  # micro_batch_size
    st.sampled_from([None, "cross_entropy", "l1", "mse"]),
    st.sampled_from([None, 3.0, -1.5]),  # stale .grad values
    st.integers(1, 4),  # input width
)


@pytest.mark.rules("full_batch_gradient")
@pytest.mark.points(1.5)
def test_generated_against_full_batch(sandbox):
    """Matches the full-batch gradient on generated sizes, losses and stale gradients"""
    configs = []
    for n, m, loss, prefill, d_in in draw(GENERATED, 20, "accumulation/generated v1"):
        classes = 3 if loss == "cross_entropy" else None
        label = f"n = {n}, micro_batch_size = {m}, loss_fn = {loss or 'the default F.mse_loss'}" + (
            f", with stale values {prefill} in .grad" if prefill is not None else ""
        )
        configs.append(_cfg(n, m, loss, (d_in, 4, 3), prefill, label, classes))
    _grade(sandbox, configs)


@pytest.mark.rules("unscaled_factor")
@pytest.mark.points(1)
def test_unscaled_factor(student):
    """unscaled_factor: how much too large unscaled accumulation is (a Python float)"""
    cases = [(12, 4), (64, 8), (5, 5), (6, 1), (100, 25), (21, 7)]
    answers = []
    for n, m in cases:
        # Judge-side truth from a real experiment: a linear model, per-micro-batch mean losses
        # backpropagated unscaled, compared with the full-batch gradient.
        X = torch.randn(n, 2, dtype=torch.float64)
        Y = torch.randn(n, 1, dtype=torch.float64)
        w = torch.randn(2, 1, dtype=torch.float64, requires_grad=True)
        F.mse_loss(X @ w, Y).backward()
        full = w.grad.clone()
        w.grad = None
        for s in range(0, n, m):
            F.mse_loss(X[s : s + m] @ w, Y[s : s + m]).backward()
        truth = (w.grad / full).mean().item()
        got = student.unscaled_factor(n, m)
        number = isinstance(got, int | float) and not isinstance(got, bool)
        check(number, f"unscaled_factor({n}, {m}) must return a Python float, got {type(got).__name__} `{got!r}`.")
        answers.append((n, m, got, truth))
    wrong = [(n, m, got) for n, m, got, truth in answers if not math.isclose(got, truth, rel_tol=1e-6)]
    if wrong:
        said = "; ".join(f"unscaled_factor({a}, {b}) returned {g!r}" for a, b, g in wrong[:3])
        # A cause is named only when every answer (right ones included) is what that mistake gives on these
        # inputs, and no other candidate's formula gives them all too (issue 44): one number proves nothing.
        formulas = {"factor_inverted": lambda n, m, t: 1 / t, "factor_micro_size": lambda n, m, t: m}
        fits = [key for key, f in formulas.items()
                if all(math.isclose(g, f(a, b, t), rel_tol=1e-6) for a, b, g, t in answers)]
        described = (f"{said}: not the factor by which the unscaled accumulated gradient exceeds the full-batch "
                     f"one.")
        advice = " Count how many micro-batch means get summed, each of them the size of a full-batch mean."
        if fits == ["factor_inverted"]:
            fail(described + " Every answer is the inverse of the factor asked for: the question asks how many "
                 "times too large the unscaled gradient is, not the correction to apply." + advice,
                 misconception="factor_inverted")
        if fits == ["factor_micro_size"]:
            fail(described + " Every answer is the micro-batch size, not the quantity asked for." + advice,
                 misconception="factor_micro_size")
        fail(described + advice)
    for n, m, got, _ in answers:
        check(
            type(got) is float,
            f"unscaled_factor({n}, {m}) returned the right number as {type(got).__name__} `{got!r}`; the "
            f"contract asks for a Python float (float(...), or true division /).",
            misconception="factor_type",
        )


# ---------------------------------------------------------------- the conventions

CONVENTIONS = st.tuples(st.integers(1, 9), st.integers(1, 10), st.sampled_from(["mse", "l1", None]), st.booleans(),
                        st.integers(0, 2**31 - 1))


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_leaves_inputs_and_settings_as_found(student, sandbox):
    """X, Y, the model's weights and mode, and torch's global settings are left as found (only .grad changes)"""
    nn_ = {name: sandbox.ref(f"torch.nn.{name}") for name in ("Sequential", "Linear", "Tanh")}
    for n, m, loss, train, seed in draw(CONVENTIONS, 5, "accumulation/conventions v1"):
        g = torch.Generator().manual_seed(seed)
        X, Y = torch.randn(n, 3, generator=g, dtype=torch.float64), torch.randn(n, 2, generator=g, dtype=torch.float64)
        model = nn_["Sequential"](nn_["Linear"](3, 4, dtype=torch.float64), nn_["Tanh"](),
                                  nn_["Linear"](4, 2, dtype=torch.float64))
        model.train(train)
        kwargs = {} if loss is None else {"loss_fn": sandbox.ref(f"torch.nn.functional.{loss}_loss")}
        as_found(sandbox, student.accumulate_gradients, model, X, Y, m, names=["model", "X", "Y", "micro_batch_size"],
                 call=f"accumulate_gradients(model, X, Y, {m}{', loss_fn=F.' + loss + '_loss' if loss else ''}) for "
                      f"n = {n}, the model in {'train' if train else 'eval'} mode", **kwargs)
    as_found(sandbox, student.unscaled_factor, 12, 4, call="unscaled_factor(12, 4)")
