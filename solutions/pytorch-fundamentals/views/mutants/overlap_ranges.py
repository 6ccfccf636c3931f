# misconception: none
"""Decides sharing by whether the memory ranges the two tensors touch overlap: x[0] and
x[1] do not overlap but live in the same storage."""
import torch


def shares_storage(a, b):
    def span(t):
        lo = t.data_ptr()
        last = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True))
        hi = lo + (last + 1) * t.element_size()
        return lo, hi
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def view_or_copy():
    return {
        "basic_slice": "view",
        "select": "view",
        "transpose": "view",
        "permute": "view",
        "expand": "view",
        "unsqueeze": "view",
        "narrow": "view",
        "fancy_index": "copy",
        "bool_mask": "copy",
        "reshape_contiguous": "view",
        "reshape_transposed": "copy",
        "contiguous_of_transposed": "copy",
        "clone": "copy",
        "detach": "view",
        "arithmetic": "copy",
        "cat": "copy",
        "to_float64": "copy",
    }


def flatten_any(x):
    return x.reshape(-1)


def exercise_result():
    x = torch.zeros(2, 3)
    a = x[0]
    b = x[:, [0, 2]]
    c = x.reshape(3, 2)
    a += 1
    b += 10
    c[2, 1] = 5
    return x
