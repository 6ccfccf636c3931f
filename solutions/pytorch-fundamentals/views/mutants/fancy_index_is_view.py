# misconception: none
"""Believes fancy indexing (x[:, [0, 2]]) returns a view, so b += 10 would change x."""
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
    return torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 5.0]])
