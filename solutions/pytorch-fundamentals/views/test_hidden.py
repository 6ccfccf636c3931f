"""Hidden suite of `views` (views versus copies)."""
import pytest
import torch

from autograder.judge import assert_close, check, fail, shares_storage

KEYS = {
    "indexing": ["basic_slice", "select", "narrow", "fancy_index", "bool_mask"],
    "layout": ["transpose", "permute", "expand", "unsqueeze", "reshape_contiguous",
               "reshape_transposed", "contiguous_of_transposed"],
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


def _as_bool(value, what):
    check(isinstance(value, bool) or type(value).__name__ == "bool_",
          f"`shares_storage{what}` returned {type(value).__name__} `{value!r}`; it must return a "
          f"Python bool (True or False). If you compare with a tensor operation, wrap it in "
          f"bool(...).")
    return bool(value)


@pytest.mark.points(1.5)
def test_shares_storage_views(student):
    """shares_storage: a tensor and its views share storage"""
    x = torch.randn(4, 5)
    y = torch.randn(3, 4, 2)
    cases = [
        ("(x, x[1])", x, x[1]),
        ("(x[2], x)", x[2], x),
        ("(x[0], x[3])", x[0], x[3]),
        ("(x, x[:, 3:])", x, x[:, 3:]),
        ("(x, x.T)", x, x.T),
        ("(x[1:, ::2], x[:, -1])", x[1:, ::2], x[:, -1]),
        ("(x, x)", x, x),
        ("(y, y.permute(2, 0, 1)[1])", y, y.permute(2, 0, 1)[1]),
    ]
    for label, a, b in cases:
        assert shares_storage(a, b), "grader bug: the judge's own inputs do not share storage"
        got = _as_bool(student.shares_storage(a, b), label)
        if not got:
            hint = ""
            if a.data_ptr() != b.data_ptr():
                hint = (" These two tensors start at different memory addresses (a different "
                        "storage offset) yet live in the same storage: comparing `data_ptr()` "
                        "or element addresses is not enough; compare the storages themselves.")
            fail(f"`shares_storage{label}` returned False, but the second tensor is a view of "
                 f"the same memory as the first (writing through one changes the other).{hint}")


@pytest.mark.points(1)
def test_shares_storage_distinct(student):
    """shares_storage: copies and unrelated tensors do not share storage"""
    x = torch.randn(4, 5)
    z = torch.zeros(3)
    cases = [
        ("(x, x.clone())", x, x.clone(), "a clone has equal values but its own memory"),
        ("(x, x[[0, 1]])", x, x[[0, 1]], "fancy (list) indexing gathers into new memory"),
        ("(x, x[x > 0])", x, x[x > 0], "boolean-mask indexing gathers into new memory"),
        ("(x, x + 0)", x, x + 0, "arithmetic allocates a new result"),
        ("(z, torch.zeros(3))", z, torch.zeros(3), "equal values do not mean shared memory"),
        ("(x[0], x.T.contiguous()[0])", x[0], x.T.contiguous()[0],
         "contiguous() of a transposed tensor copies"),
    ]
    for label, a, b, why in cases:
        assert not shares_storage(a, b), "grader bug: the judge's own inputs share storage"
        got = _as_bool(student.shares_storage(a, b), label)
        check(not got,
              f"`shares_storage{label}` returned True, but these tensors live in different "
              f"storages ({why}). Sharing storage is about the memory block, not about equal "
              f"values, shapes or overlapping ranges.")


def _get_table(student):
    table = student.view_or_copy()
    check(isinstance(table, dict),
          f"`view_or_copy()` must return a dict, got {type(table).__name__}.")
    missing = [k for k in ALL_KEYS if k not in table]
    check(not missing, f"`view_or_copy()` is missing the key(s) {missing}; all {len(ALL_KEYS)} "
                       f"operation names of the statement are required.")
    bad = {k: table[k] for k in ALL_KEYS if table[k] not in ("view", "copy")}
    check(not bad, f"`view_or_copy()` values must be the strings \"view\" or \"copy\"; got {bad}.")
    return table


@pytest.mark.points(0.5)
def test_view_or_copy_format(student):
    """view_or_copy: a dict with every operation name, each "view" or "copy\""""
    table = _get_table(student)
    extra = sorted(set(table) - set(ALL_KEYS))
    check(not extra, f"`view_or_copy()` has unexpected key(s) {extra}; use exactly the names "
                     f"of the statement.")


def _check_group(student, group, title, advice):
    table = _get_table(student)
    truth = _truth()
    wrong = [k for k in KEYS[group] if table[k] != truth[k]]
    check(not wrong,
          f"{len(wrong)} of the {len(KEYS[group])} {title} ({', '.join(KEYS[group])}) are "
          f"classified wrong. {advice} You can check each one yourself: build a contiguous "
          f"x = torch.randn(4, 6), apply the operation and call your shares_storage on x and "
          f"the result.")


@pytest.mark.points(1)
def test_view_or_copy_indexing(student):
    """view_or_copy: indexing operations"""
    _check_group(student, "indexing", "indexing operations",
                 "A result is a view only if it can be described as an offset plus one stride "
                 "per dimension into the original memory; arbitrary sets of elements cannot.")


@pytest.mark.points(1)
def test_view_or_copy_layout(student):
    """view_or_copy: shape and layout operations"""
    _check_group(student, "layout", "shape/layout operations",
                 "For each, ask whether the result can be described by an offset and strides over "
                 "x's existing memory (a stride may even be 0); reshape quietly copies when it "
                 "cannot, and contiguous() copies whenever its input is not contiguous.")


@pytest.mark.points(1)
def test_view_or_copy_new_tensor(student):
    """view_or_copy: clone, detach, arithmetic, cat, dtype conversion"""
    _check_group(student, "new_tensor", "operations that may create new tensors",
                 "For each, ask whether the operation must produce different bytes (new values or "
                 "a new element type) or only a new tensor object over the same bytes.")


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
    ]


@pytest.mark.points(1)
def test_flatten_any_values(student):
    """flatten_any: row-major values, shape and dtype for any layout"""
    for label, x in _flatten_cases():
        expected = x.contiguous().view(-1)
        got = student.flatten_any(x)
        assert_close(got, expected, rtol=0, atol=0, name=f"the result of flatten_any on {label}",
                     misconceptions={
                         "The elements come out in column-major order: flattening must follow "
                         "the logical row-major index order of x, not its memory order or the "
                         "order of the transpose.": x.T.contiguous().view(-1),
                     } if x.dim() == 2 and x.shape[0] > 1 and x.shape[1] > 1 else None,
                     hint="The result must list x's elements in row-major (C) order of x's own "
                          "indices, as 1-D with x.numel() elements.")


@pytest.mark.points(0.5)
def test_flatten_any_view_of_contiguous(student):
    """flatten_any: returns a view of a contiguous tensor"""
    for label, x in [("a contiguous (4, 5) tensor", torch.randn(4, 5)),
                     ("a contiguous (2, 3, 4) float64 tensor",
                      torch.randn(2, 3, 4, dtype=torch.float64))]:
        call = student.call_detailed("flatten_any", x)
        check(isinstance(call.value, torch.Tensor) and call.value.shape == (x.numel(),),
              f"flatten_any of {label} must return a 1-D tensor of {x.numel()} elements.")
        check(shares_storage(call.value, call.args[0]),
              f"flatten_any of {label} returned a copy, but a contiguous tensor can always be "
              f"flattened as a view; copy only when the layout makes a view impossible.")


@pytest.mark.points(0.75)
def test_flatten_any_view_when_layout_allows(student):
    """flatten_any: returns a view of a non-contiguous tensor whose layout allows one"""
    cases = [
        ("x[:, :, ::2] of a contiguous (2, 3, 4) tensor (strides (12, 4, 2))",
         torch.randn(2, 3, 4)[:, :, ::2]),
        ("x[::3] of a 1-D tensor", torch.randn(10)[::3]),
        ("x.T of a (1, 6) tensor", torch.randn(1, 6).T),
    ]
    for label, x in cases:
        assert x.view(-1) is not None, "grader bug: no view of the judge's own input"
        call = student.call_detailed("flatten_any", x)
        assert_close(call.value, x.reshape(-1), rtol=0, atol=0,
                     name=f"the result of flatten_any on {label}")
        check(shares_storage(call.value, call.args[0]),
              f"flatten_any of {label} returned a copy, but this non-contiguous layout can be "
              f"flattened as a view (all its elements are evenly spaced in row-major order). "
              f"Calling .contiguous() (or clone) first copies whenever the tensor is not "
              f"contiguous, even when no copy is needed.")


@pytest.mark.points(0.25)
def test_flatten_any_leaves_input_alone(student):
    """flatten_any: does not modify its input"""
    for label, x in [("x.T", torch.randn(3, 4).T), ("a contiguous tensor", torch.randn(2, 5))]:
        sent = x.clone()
        call = student.call_detailed("flatten_any", x)
        after = call.args[0]
        check(after.shape == sent.shape and torch.equal(after, sent),
              f"flatten_any changed its input ({label}): its shape or values after the call "
              f"differ from what was passed. Return a new tensor (view or copy) instead of "
              f"modifying x in place.")


@pytest.mark.points(1.5)
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
    assert_close(got, x, rtol=0, atol=0, name=name, misconceptions={
        "This is what you get if x[:, [0, 2]] were a view: indexing with a list "
        "(fancy indexing) copies, so b += 10 cannot reach x.": fancy_view,
        "This is what you get if reshape copied: reshaping a contiguous tensor returns "
        "a view, so writing into c writes into x.": reshape_copy,
        "This treats fancy indexing as a view and reshape as a copy; it is the other "
        "way round.": both,
        "This treats x[0] as a copy: selecting a row with an integer index returns a "
        "view.": select_copy,
    }, hint="Trace which of a, b, c share x's storage, then apply each in-place update.")
