# misconception: none
"""Believes reshape copies, so c[2, 1] = 5 would leave x unchanged."""
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
    return x.reshape(-1)


def exercise_result():
    return torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
