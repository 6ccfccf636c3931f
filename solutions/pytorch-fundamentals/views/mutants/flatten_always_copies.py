# misconception: flatten_copies
"""Clones to be safe: flatten_any never returns a view, even of a contiguous tensor."""


def flatten_any(x):
    return x.flatten().clone()
