"""Hidden suite of `views` (views versus copies).

Storage facts are judged against what the judge itself sent: tensors that
share storage in one message share it in the sandbox, and a probe keeps a
*witness* (an alias of each input the student's function never receives), so
a function that copies and then rebinds the caller's tensor onto the copy
(`x.set_(...)`) is seen for what it did.
"""

import random

import pytest
import torch
from hypothesis import strategies as st

from autograder.judge import as_found, assert_close, check, fail, quote, shares_storage
from autograder.judge.generated import draw

KEYS = {
    "indexing": ["basic_slice", "select", "narrow", "fancy_index", "bool_mask"],
    "layout": [
        "transpose",
        "permute",
        "expand",
        "unsqueeze",
        "reshape_contiguous",
        "reshape_transposed",
        "contiguous_of_transposed",
    ],
    "new_tensor": ["clone", "detach", "arithmetic", "cat", "to_float64"],
}
ALL_KEYS = [k for group in KEYS.values() for k in group]


def _ops():
    """The statement's operations, applied judge-side to find the truth with torch itself."""
    return {
        "basic_slice": lambda x: x[1:, ::2],
        "select": lambda x: x[:, 1],
        "transpose": lambda x: x.T,
        "permute": lambda x: x.permute(1, 0),
        "expand": lambda x: x[:1].expand(x.shape[0], x.shape[1]),
        "unsqueeze": lambda x: x.unsqueeze(0),
        "narrow": lambda x: x.narrow(0, 1, 2),
        "fancy_index": lambda x: x[[0, 2]],
        "bool_mask": lambda x: x[x > 0],
        "reshape_contiguous": lambda x: x.reshape(x.shape[1], x.shape[0]),
        "reshape_transposed": lambda x: x.T.reshape(-1),
        "contiguous_of_transposed": lambda x: x.T.contiguous(),
        "clone": lambda x: x.clone(),
        "detach": lambda x: x.detach(),
        "arithmetic": lambda x: x + 1,
        "cat": lambda x: torch.cat([x]),
        "to_float64": lambda x: x.to(torch.float64),
    }


def _truth():
    x = torch.randn(5, 7)
    return {k: ("view" if shares_storage(x, op(x)) else "copy") for k, op in _ops().items()}


# What each operation really does, and the misconception key of the opposite belief.
WHY = {
    "basic_slice": ("basic slicing (ranges and steps) only changes offset and strides", "slice_copies"),
    "select": ("an integer index drops a dimension by changing the offset", "select_copies"),
    "narrow": ("narrow is a range slice along one dimension", "slice_copies"),
    "fancy_index": ("indexing with a list (advanced indexing) gathers into new memory", "fancy_index_view"),
    "bool_mask": (
        "a boolean mask picks an arbitrary set of elements, which no strides can describe",
        "fancy_index_view",
    ),
    "transpose": ("a transpose swaps the strides", "layout_op_copies"),
    "permute": ("permute reorders the strides", "layout_op_copies"),
    "expand": ("expand repeats by giving a size-1 dimension stride 0; no data is repeated in memory", "expand_copies"),
    "unsqueeze": ("unsqueeze inserts a size-1 dimension", "layout_op_copies"),
    "reshape_contiguous": ("reshape of a contiguous tensor can always be a view", "reshape_copy"),
    "reshape_transposed": (
        "x.T is not contiguous and its row-major flattening is not evenly spaced in memory, so reshape must copy",
        "reshape_always_views",
    ),
    "contiguous_of_transposed": ("contiguous() copies whenever its input is not contiguous", "contiguous_always_views"),
    "clone": ("clone always allocates new memory", "clone_is_view"),
    "detach": ("detach returns a new tensor object over the same memory, only cut from the graph", "detach_copies"),
    "arithmetic": ("arithmetic writes its result into newly allocated memory", "arithmetic_view"),
    "cat": ("torch.cat always allocates the result, even for a single tensor", "cat_view"),
    "to_float64": ("a new element type needs new bytes", "dtype_change_view"),
}


def _as_bool(value, what):
    check(
        isinstance(value, bool),
        f"`shares_storage{what}` returned {type(value).__name__} `{value!r}`; it must return a "
        f"Python bool (True or False). If you compare with a tensor operation or NumPy, wrap it "
        f"in bool(...).",
    )
    return value


# ---------------------------------------------------------------- shares_storage


def _span(t):
    lo = t.data_ptr()
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True)) if t.numel() else -1
    return lo, lo + (last + 1) * t.element_size()


def _candidates(a, b):
    """Answers of known-wrong formulas, computed on the judge's own tensors."""
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return {
        "data_ptr": a.data_ptr() == b.data_ptr(),
        "overlap": a0 < b1 and b0 < a1,
        "value_equality": a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b)),
    }


DIAGNOSES = {
    "data_ptr": "These answers are exactly what comparing `data_ptr()` (the address of the first "
    "element) gives: two views of one storage can start at different addresses (a "
    "different storage offset); compare the storages themselves.",
    "overlap": "These answers are exactly what testing whether the two tensors' memory ranges overlap "
    "gives: views of one storage need not overlap (x[0] and x[1] do not), yet they share it.",
    "value_equality": "These answers are exactly what comparing values gives: equal values do not mean "
    "shared memory, and views with different shapes share memory without being equal.",
}


def _judge_shares(sandbox, cases):
    """Grade shares_storage on labelled (label, a, b) cases in one sandbox call."""
    for _, a, b in cases:
        assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor), "grader bug"
    cases = [(quote(label, a, b), a, b) for label, a, b in cases]  # a quote is the call that was made
    replies = sandbox.probe("shares_many", [[a, b] for _, a, b in cases])
    answers = []
    for (label, _, _), r in zip(cases, replies, strict=True):
        if "error" in r:
            fail(f"`shares_storage{label}` raised {r['error']}.")
        answers.append(_as_bool(r["value"], label))
    truth = [shares_storage(a, b) for _, a, b in cases]
    wrong = [i for i, (g, t) in enumerate(zip(answers, truth, strict=True)) if g != t]
    if not wrong:
        return
    lines = "; ".join(
        f"`shares_storage{cases[i][0]}` returned {answers[i]}, expected {truth[i]}" for i in wrong[:4]
    ) + (f" (and {len(wrong) - 4} more)" if len(wrong) > 4 else "")
    fitting = [
        k for k in DIAGNOSES if all(_candidates(a, b)[k] == g for (_, a, b), g in zip(cases, answers, strict=True))
    ]
    if len(fitting) == 1:
        fail(
            f"{len(wrong)} of {len(cases)} answers are wrong: {lines}. {DIAGNOSES[fitting[0]]}",
            misconception=fitting[0],
        )
    fail(
        f"{len(wrong)} of {len(cases)} answers are wrong: {lines}. True means the two tensors are "
        f"backed by the same storage (the same memory block), whatever their offsets, shapes and strides."
    )


def _views_cases():
    """(quote, a, b): each quote, pasted into a notebook after x, y, z are built as here, is the call made."""
    x = torch.randn(4, 5)
    y = torch.randn(3, 4, 2, dtype=torch.float64)
    z = torch.arange(7)
    return [
        ("(x, x[1])", x, x[1]),
        ("(x[2], x)", x[2], x),
        ("(x[0], x[3])", x[0], x[3]),
        ("(x, x[:, 3:])", x, x[:, 3:]),
        ("(x, x.T)", x, x.T),
        ("(x[1:, ::2], x[:, -1])", x[1:, ::2], x[:, -1]),
        ("(x, x)", x, x),
        ("(y, y.permute(2, 0, 1)[1])", y, y.permute(2, 0, 1)[1]),
        ("(z[5:], z[:2])", z[5:], z[:2]),
        ("(x[1:, 1:], x[:3, :4]) (same shape)", x[1:, 1:], x[:3, :4]),
    ]


def _distinct_cases():
    x = torch.randn(4, 5)
    z = torch.zeros(3)
    return [
        ("(x, x.clone())", x, x.clone()),
        ("(x, x[[0, 1]])", x, x[[0, 1]]),
        ("(x, x[x > 0])", x, x[x > 0]),
        ("(x, x + 0)", x, x + 0),
        ("(z, torch.zeros(3))", z, torch.zeros(3)),
        ("(x[0], x.T.contiguous()[0])", x[0], x.T.contiguous()[0]),
    ]


@pytest.mark.rules("shares_storage")
@pytest.mark.points(1.25)
def test_shares_storage_views(sandbox):
    """shares_storage: a tensor and its views share storage"""
    _judge_shares(sandbox, _views_cases())


@pytest.mark.rules("shares_storage")
@pytest.mark.points(0.75)
def test_shares_storage_distinct(sandbox):
    """shares_storage: copies and unrelated tensors do not share storage"""
    _judge_shares(sandbox, _distinct_cases())


def _layouts():
    """Views and copies of a fresh base tensor, as (label, make(base))."""
    views = [
        ("x", lambda t: t),
        ("x[1:]", lambda t: t[1:]),
        ("x[::2]", lambda t: t[::2]),
        ("x[-1]", lambda t: t[-1]),
        ("x.T", lambda t: t.T),
        ("x.unsqueeze(0)", lambda t: t.unsqueeze(0)),
        ("x.flip(0)", None),
        ("x.view(-1)", lambda t: t.view(-1)),
        ("x[1:, 1:]", lambda t: t[1:, 1:]),
        ("x.detach()", lambda t: t.detach()),
    ]
    copies = [
        ("x.clone()", lambda t: t.clone()),
        ("x.flip(0)", lambda t: t.flip(0)),
        ("x[[0]]", lambda t: t[[0]]),
        ("x * 1", lambda t: t * 1),
        ("x.double()", lambda t: t.double()),
        ("torch.zeros_like(x)", lambda t: torch.zeros_like(t)),
    ]
    return [v for v in views if v[1] is not None] + copies


LAYOUTS = _layouts()
PAIRS = st.tuples(
    st.integers(2, 5),
    st.integers(2, 6),
    st.sampled_from([torch.float32, torch.float64, torch.int64]),
    st.integers(0, len(LAYOUTS) - 1),
    st.integers(0, len(LAYOUTS) - 1),
    st.booleans(),
)


@pytest.mark.rules("shares_storage")
@pytest.mark.points(0.5)
def test_shares_storage_generated(sandbox):
    """shares_storage: agrees with torch on generated views and copies"""
    cases = []
    for rows, cols, dtype, i, j, unrelated in draw(PAIRS, 25, "views/shares_storage v1"):
        base = torch.arange(rows * cols).reshape(rows, cols).to(dtype)
        other = base.clone() if unrelated else base
        (la, fa), (lb, fb) = LAYOUTS[i], LAYOUTS[j]
        lb_label = lb.replace("x", "y") if unrelated else lb
        cases.append(
            (
                f"({la}, {lb_label}) for a {rows}x{cols} {str(dtype)[6:]} x" + (", y = x.clone()" if unrelated else ""),
                fa(base),
                fb(other),
            )
        )
    _judge_shares(sandbox, cases)


# ---------------------------------------------------------------- view_or_copy


def _get_table(student):
    table = student.view_or_copy()
    check(type(table) is dict, f"`view_or_copy()` must return a dict, got {type(table).__name__}.")
    missing = [k for k in ALL_KEYS if k not in table]
    check(
        not missing,
        f"`view_or_copy()` is missing the key(s) {missing}; all {len(ALL_KEYS)} "
        f"operation names of the statement are required.",
    )
    bad = {k: table[k] for k in ALL_KEYS if table[k] not in ("view", "copy")}
    check(not bad, f'`view_or_copy()` values must be the strings "view" or "copy"; got {bad}.')
    return table


@pytest.mark.rules("view_or_copy")
@pytest.mark.points(0.5)
def test_view_or_copy_format(student):
    """view_or_copy: a dict with every operation name, each "view" or "copy\""""
    table = _get_table(student)
    extra = sorted(set(table) - set(ALL_KEYS))
    check(not extra, f"`view_or_copy()` has unexpected key(s) {extra}; use exactly the names of the statement.")


def _check_group(student, group, title):
    table = _get_table(student)
    truth = _truth()
    wrong = [k for k in KEYS[group] if table[k] != truth[k]]
    if not wrong:
        return
    details = "; ".join(f"`{k}` is a {truth[k]}, not a {table[k]}: {WHY[k][0]}" for k in wrong)
    keys = {WHY[k][1] for k in wrong}
    fail(
        f"{len(wrong)} of the {len(KEYS[group])} {title} are classified wrong. {details}. You can check "
        f"each one yourself: build a contiguous x = torch.randn(4, 6), apply the operation and call your "
        f"shares_storage on x and the result.",
        misconception=keys.pop() if len(keys) == 1 else "",
    )


@pytest.mark.rules("view_or_copy")
@pytest.mark.points(1)
def test_view_or_copy_indexing(student):
    """view_or_copy: indexing operations"""
    _check_group(student, "indexing", "indexing operations")


@pytest.mark.rules("view_or_copy")
@pytest.mark.points(1)
def test_view_or_copy_layout(student):
    """view_or_copy: shape and layout operations"""
    _check_group(student, "layout", "shape/layout operations")


@pytest.mark.rules("view_or_copy")
@pytest.mark.points(1)
def test_view_or_copy_new_tensor(student):
    """view_or_copy: clone, detach, arithmetic, cat, dtype conversion"""
    _check_group(student, "new_tensor", "operations that may create new tensors")


# ---------------------------------------------------------------- flatten_any


def _memory_order(x):
    """x's elements in the order they lie in memory (what a storage-order flatten gives)."""
    if x.dim() == 0:
        return x.reshape(1)
    idx = torch.stack(torch.meshgrid(*[torch.arange(n) for n in x.shape], indexing="ij"), -1).reshape(-1, x.dim())
    offsets = (idx * torch.tensor(x.stride())).sum(-1)
    return x.reshape(-1)[torch.argsort(offsets, stable=True)]


def _view_possible(x):
    try:
        x.view(-1)
    except RuntimeError:
        return False
    return True


def _flatten(sandbox, cases):
    """Call flatten_any on every (label, x) in one sandbox call; judge the input left alone.

    A contiguous control tensor rides along, so that a copy of a layout that allows a view can
    be told apart: a function that copies even the control copies always; one that views the
    control copies only non-contiguous inputs.
    """
    control = torch.randn(3, 4)
    replies = sandbox.probe("flatten_many", [x for _, x in cases] + [control])
    check(isinstance(replies, list) and len(replies) == len(cases) + 1, "grader bug: flatten_many replied badly")
    out = []
    for (label, x), r in zip(cases + [("a contiguous (3, 4) tensor", control)], replies, strict=True):
        if "error" in r:
            err = r["error"]
            if "view size is not compatible" in err:
                fail(
                    f"flatten_any on {label} raised {err}. `view` cannot flatten every layout: it "
                    f"never copies, so it fails when the elements are not evenly spaced in row-major "
                    f"order (x.T, for instance). Fall back to a copy only in that case.",
                    misconception="view_on_noncontiguous",
                )
            fail(f"flatten_any on {label} raised {err}.")
        value, arg, witness = r["value"], r["arg"], r["witness"]
        _check_input_alone(label, x, arg, witness)
        out.append((label, x, value, witness))
    *out, (_, _, got, witness) = out
    copies_always = not (isinstance(got, torch.Tensor) and shares_storage(got, witness))
    return [(label, x, value, witness, copies_always) for label, x, value, witness in out]


def _check_input_alone(label, sent, arg, witness):
    """The caller's tensor after the call: same storage as the untouched alias, same geometry and values."""
    assert isinstance(witness, torch.Tensor), "grader bug: the probe lost its witness"
    check(isinstance(arg, torch.Tensor), f"flatten_any on {label} replaced its input with a non-tensor.")
    if not shares_storage(arg, witness) or arg.untyped_storage().nbytes() != witness.untyped_storage().nbytes():
        fail(
            f"After flatten_any on {label}, the caller's tensor x no longer points at its original memory: "
            f"the function rebound x onto other memory (x.set_(...), x.data = ...). It must leave x alone "
            f"and return its result.",
            misconception="rebinds_input",
        )
    check(
        arg.shape == sent.shape
        and arg.stride() == sent.stride()
        and arg.storage_offset() == witness.storage_offset()
        and arg.dtype == sent.dtype,
        f"flatten_any changed the caller's tensor ({label}): its shape, strides or offset after the "
        f"call (shape {tuple(arg.shape)}, strides {arg.stride()}) differ from what was passed (shape "
        f"{tuple(sent.shape)}, strides {sent.stride()}). In-place methods such as resize_, "
        f"transpose_ or squeeze_ change the caller's tensor; return a new one instead.",
        misconception="modifies_input",
    )
    check(
        torch.equal(arg, sent),
        f"flatten_any changed the values of the caller's tensor ({label}). Return a new tensor "
        f"(a view or a copy) instead of writing into x.",
        misconception="modifies_input",
    )


def _check_values(label, x, got):
    expected = x.contiguous().view(-1)
    mis = {}
    mem = _memory_order(x)
    if not torch.equal(mem, expected):
        mis["memory_order"] = (
            "The elements come out in the order they lie in memory: flattening must "
            "follow x's own row-major index order, whatever its strides.",
            mem,
        )
    assert_close(
        got,
        expected,
        rtol=0,
        atol=0,
        name=f"the result of flatten_any on {label}",
        misconceptions=mis,
        hint="The result must list x's elements in row-major (C) order of x's own indices, as "
        "1-D with x.numel() elements and x's dtype.",
    )


def _check_view(label, x, got, witness, copies_always):
    if _view_possible(x):
        if not shares_storage(got, witness):
            if copies_always:
                fail(
                    f"flatten_any of {label} returned a copy, and it copies even a contiguous tensor: "
                    f"a contiguous tensor (and any layout whose elements are evenly spaced in row-major "
                    f"order) can be flattened as a view. Copy only when the layout makes a view "
                    f"impossible.",
                    misconception="flatten_copies",
                )
            fail(
                f"flatten_any of {label} returned a copy, but this layout can be flattened as a view "
                f"(its elements are evenly spaced in row-major order, with strides {x.stride()}). Calling "
                f".contiguous() (or clone) first copies whenever the tensor is not contiguous, even when "
                f"no copy is needed.",
                misconception="contiguous_first",
            )
    else:
        check(
            not shares_storage(got, witness) or got.numel() == 0,
            f"flatten_any of {label} returned a tensor over x's memory although no view can list x's "
            f"elements in row-major order.",
        )


def _flatten_cases():
    base = torch.randn(3, 4, 5, dtype=torch.float64)
    return [
        ("a contiguous 3-D tensor", torch.randn(2, 3, 4)),
        ("x.T of a 2-D tensor", torch.randn(4, 6).T),
        ("a permuted 3-D float64 tensor", base.permute(2, 0, 1)),
        ("a strided slice x[::2, 1::2]", torch.randn(6, 7)[::2, 1::2]),
        ("an expanded tensor", torch.randn(1, 4).expand(3, 4)),
        ("an int64 tensor transposed", torch.arange(12).reshape(3, 4).T),
        ("a 0-d tensor", torch.tensor(2.5)),
        ("a 1-D tensor", torch.randn(5)),
        ("an empty (0, 3) tensor", torch.zeros(0, 3)),
        ("a bool tensor x.T", (torch.randn(3, 5) > 0).T),
    ]


@pytest.mark.rules("flatten_any")
@pytest.mark.points(0.75)
def test_flatten_any_values(sandbox):
    """flatten_any: row-major values, shape and dtype for any layout"""
    for label, x, got, _, _ in _flatten(sandbox, _flatten_cases()):
        _check_values(label, x, got)


@pytest.mark.rules("flatten_any")
@pytest.mark.points(0.5)
def test_flatten_any_view_of_contiguous(sandbox):
    """flatten_any: returns a view of a contiguous tensor"""
    cases = [
        ("a contiguous (4, 5) tensor", torch.randn(4, 5)),
        ("a contiguous (2, 3, 4) float64 tensor", torch.randn(2, 3, 4, dtype=torch.float64)),
        ("x[1:] of a contiguous (5, 3) tensor (offset 3)", torch.randn(5, 3)[1:]),
    ]
    for label, x, got, witness, always in _flatten(sandbox, cases):
        check(
            isinstance(got, torch.Tensor) and got.shape == (x.numel(),),
            f"flatten_any of {label} must return a 1-D tensor of {x.numel()} elements.",
        )
        _check_view(label, x, got, witness, always)


@pytest.mark.rules("flatten_any")
@pytest.mark.points(0.5)
def test_flatten_any_view_when_layout_allows(sandbox):
    """flatten_any: returns a view of a non-contiguous tensor whose layout allows one"""
    cases = [
        ("x[:, :, ::2] of a contiguous (2, 3, 4) tensor (strides (12, 4, 2))", torch.randn(2, 3, 4)[:, :, ::2]),
        ("x[::3] of a 1-D tensor", torch.randn(10)[::3]),
        ("x.T of a (1, 6) tensor", torch.randn(1, 6).T),
    ]
    for label, x, got, witness, always in _flatten(sandbox, cases):
        assert _view_possible(x), "grader bug: no view of the judge's own input"
        _check_values(label, x, got)
        _check_view(label, x, got, witness, always)


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.25)
def test_flatten_any_leaves_input_alone(student, sandbox):
    """Every function leaves its inputs (values, shape, strides, memory) and torch's global settings as found"""
    _flatten(
        sandbox,
        [
            ("x.T", torch.randn(3, 4).T),
            ("a contiguous tensor", torch.randn(2, 5)),
            ("x[1:, ::2]", torch.randn(4, 6)[1:, ::2]),
        ],
    )
    x = torch.randn(4, 6)
    for expr, arg in (("(x.T)", x.T), ("(x[1:, ::2])", x[1:, ::2]), ("(torch.tensor(2.5))", torch.tensor(2.5))):
        as_found(sandbox, student.flatten_any, arg, call="flatten_any" + quote(expr, arg), names=["x"])
    as_found(sandbox, student.shares_storage, x, x[1], call="shares_storage" + quote("(x, x[1])", x, x[1]),
             names=["a", "b"])
    as_found(sandbox, student.shares_storage, x, x[[0, 1]], names=["a", "b"],
             call="shares_storage" + quote("(x, x[[0, 1]])", x, x[[0, 1]]))
    as_found(sandbox, student.view_or_copy, call="view_or_copy()")
    as_found(sandbox, student.exercise_result, call="exercise_result()")


LAYOUT = st.tuples(
    st.lists(st.sampled_from([3, 2, 4, 1, 5]), min_size=1, max_size=4),  # logical shape (0-d and empty: above)
    st.sampled_from([torch.float32, torch.float64, torch.int64, torch.bool]),
    st.sampled_from(["stepped", "permuted", "stepped_last", "expanded", "contiguous"]),
    st.integers(0, 2**32 - 1),  # the layout's details
)


def _make(shape, dtype, mode, layout_seed):
    """A tensor of the given logical shape whose layout is drawn (permuted, stepped, offset, expanded)."""
    rnd = random.Random(layout_seed)
    if not shape:
        return torch.tensor(3, dtype=torch.int64).to(dtype)
    if mode == "stepped_last":  # x[..., ::2] of a contiguous tensor: not contiguous, yet a flat view exists
        base = torch.arange(int(torch.tensor(shape).prod()) * 2).reshape(*shape[:-1], shape[-1] * 2).to(dtype)
        return base[..., ::2]
    big = [n * 2 + 1 for n in shape]
    base = torch.arange(int(torch.tensor(big).prod())).reshape(big).to(dtype)
    if mode == "stepped":
        index = []
        for n in shape:
            step, start = rnd.choice([1, 2]), rnd.choice([0, 1])
            index.append(slice(start, start + n * step, step))
        x = base[tuple(index)]
    else:
        x = base[tuple(slice(0, n) for n in shape)].contiguous()
    if mode in ("permuted", "stepped"):
        order = list(range(len(shape)))
        rnd.shuffle(order)
        x = x.permute(order)
    if mode == "expanded":
        d = rnd.randrange(len(shape))
        x = x.narrow(d, 0, min(1, x.shape[d])).expand(*[n if i == d else -1 for i, n in enumerate(x.shape)])
    return x


@pytest.mark.rules("flatten_any")
@pytest.mark.points(0.75)
def test_flatten_any_generated(sandbox):
    """flatten_any: values, view-when-possible and the input untouched on generated layouts"""
    cases = []
    for shape, dtype, mode, layout_seed in draw(LAYOUT, 30, "views/flatten_any v1"):
        x = _make(shape, dtype, mode, layout_seed)
        cases.append((f"a {tuple(x.shape)} {str(x.dtype)[6:]} tensor with strides {x.stride()}", x))
    for label, x, got, witness, always in _flatten(sandbox, cases):
        _check_values(label, x, got)
        _check_view(label, x, got, witness, always)


# ---------------------------------------------------------------- exercise_result


@pytest.mark.rules("exercise_result")
@pytest.mark.points(1.25)
def test_exercise_result(student):
    """exercise_result: the value of x after the snippet"""
    x = torch.zeros(2, 3)
    a = x[0]
    b = x[:, [0, 2]]
    c = x.reshape(3, 2)
    a += 1
    b += 10
    c[2, 1] = 5
    got = student.exercise_result()
    fancy_view = torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 5.0]])
    reshape_copy = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    both = torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 10.0]])
    select_copy = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
    name = "the tensor returned by exercise_result()"
    assert_close(
        got,
        x,
        rtol=0,
        atol=0,
        name=name,
        misconceptions={
            "fancy_index_view": (
                "This is what you get if x[:, [0, 2]] were a view: indexing with a list "
                "(fancy indexing) copies, so b += 10 cannot reach x.",
                fancy_view,
            ),
            "reshape_copy": (
                "This is what you get if reshape copied: reshaping a contiguous tensor "
                "returns a view, so writing into c writes into x.",
                reshape_copy,
            ),
            "fancy_view_and_reshape_copy": (
                "This treats fancy indexing as a view and reshape as a copy; it is the other way round.",
                both,
            ),
            "select_copies": (
                "This treats x[0] as a copy: selecting a row with an integer index returns a view.",
                select_copy,
            ),
        },
        hint="Trace which of a, b, c share x's storage, then apply each in-place update.",
    )
