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
