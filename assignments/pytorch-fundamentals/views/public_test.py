"""Public tests of `views`: a few sanity checks (the graded suite is hidden and more thorough)."""
import torch

from autograder.judge import assert_close, check, shares_storage


def test_shares_storage_row_and_clone(student):
    """shares_storage: a row shares, a clone does not"""
    x = torch.randn(3, 2)
    check(student.shares_storage(x, x[2]) is True,
          "`shares_storage(x, x[2])` should be True: a row of x is a view of x.")
    check(student.shares_storage(x, x.clone()) is False,
          "`shares_storage(x, x.clone())` should be False: a clone has its own memory.")


def test_view_or_copy_has_all_keys(student):
    """view_or_copy: every operation name is present"""
    table = student.view_or_copy()
    names = ["basic_slice", "select", "transpose", "permute", "expand", "unsqueeze", "narrow",
             "fancy_index", "bool_mask", "reshape_contiguous", "reshape_transposed",
             "contiguous_of_transposed", "clone", "detach", "arithmetic", "cat", "to_float64"]
    check(isinstance(table, dict) and sorted(table) == sorted(names),
          f"`view_or_copy()` must be a dict with exactly the keys {names}.")
    check(all(v in ("view", "copy") for v in table.values()),
          "every value of `view_or_copy()` must be \"view\" or \"copy\".")


def test_flatten_any_transposed(student):
    """flatten_any: works on a transposed tensor, and is a view of a contiguous one"""
    x = torch.arange(6.0).reshape(2, 3)
    assert_close(student.flatten_any(x.T), torch.tensor([0.0, 3.0, 1.0, 4.0, 2.0, 5.0]),
                 rtol=0, atol=0, name="flatten_any(x.T)")
    call = student.call_detailed("flatten_any", x)
    check(shares_storage(call.value, call.args[0]),
          "flatten_any of a contiguous tensor should return a view, not a copy.")


def test_view_or_copy_three_examples(student):
    """view_or_copy: a slice is a view, a list index and a clone are copies"""
    table = student.view_or_copy()
    check(isinstance(table, dict), "`view_or_copy()` must return a dict.")
    for op, want, why in (("basic_slice", "view", "a slice only changes the offset and the strides"),
                          ("fancy_index", "copy", "indexing with a list gathers into new memory"),
                          ("clone", "copy", "a clone has its own memory")):
        check(table.get(op) == want, f"`view_or_copy()[{op!r}]` is {table.get(op)!r}, but it is a {want}: {why}.")


def test_exercise_result_first_row(student):
    """exercise_result: a 2x3 float32 tensor whose first row saw `a += 1`"""
    got = student.exercise_result()
    check(isinstance(got, torch.Tensor) and tuple(got.shape) == (2, 3) and got.dtype == torch.float32,
          "`exercise_result()` must return the 2x3 float32 tensor x.")
    assert_close(got[0], torch.ones(3), rtol=0, atol=0, name="exercise_result()[0]",
                 hint="`a = x[0]` is a view of x, so `a += 1` writes into x's first row.")
