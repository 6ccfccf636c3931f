# misconception: none
"""Clones to be safe: flatten_any never returns a view, even of a contiguous tensor."""
import torch


def shares_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


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
    return x.flatten().clone()


def exercise_result():
    x = torch.zeros(2, 3)
    a = x[0]
    b = x[:, [0, 2]]
    c = x.reshape(3, 2)
    a += 1
    b += 10
    c[2, 1] = 5
    return x
