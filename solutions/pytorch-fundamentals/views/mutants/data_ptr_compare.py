# misconception: data_ptr
"""Compares the tensors' first-element addresses (data_ptr) instead of their storage: x and
x[1] start at different addresses but share storage."""


def shares_storage(a, b):
    return a.data_ptr() == b.data_ptr()
