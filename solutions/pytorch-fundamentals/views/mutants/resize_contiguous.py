# misconception: modifies_input
"""Misconception: flatten with x.contiguous().resize_(n): for a contiguous x, contiguous() returns x itself, so
resize_ changes the caller's tensor (its shape and strides) in place."""


def flatten_any(x):
    return x.contiguous().resize_(x.numel())
