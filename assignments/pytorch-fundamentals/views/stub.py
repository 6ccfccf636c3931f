import torch


def shares_storage(a, b):
    """True exactly when tensors a and b are backed by the same storage."""
    raise NotImplementedError


def view_or_copy():
    """Map each operation name of the statement to "view" or "copy"."""
    raise NotImplementedError


def flatten_any(x):
    """Row-major 1-D flattening of x: a view when possible, a copy only when needed."""
    raise NotImplementedError


def exercise_result():
    """The 2x3 float32 value of x after the statement's snippet."""
    raise NotImplementedError
