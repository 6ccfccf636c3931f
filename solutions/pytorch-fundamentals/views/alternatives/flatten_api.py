"""StorageImpl identity through the storage object's _cdata; torch.flatten; the snippet's
result replayed with explicit index arithmetic."""

import torch


def shares_storage(a, b):
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata


_VIEWS = {
    "basic_slice",
    "select",
    "transpose",
    "permute",
    "expand",
    "unsqueeze",
    "narrow",
    "reshape_contiguous",
    "detach",
}
_COPIES = {
    "fancy_index",
    "bool_mask",
    "reshape_transposed",
    "contiguous_of_transposed",
    "clone",
    "arithmetic",
    "cat",
    "to_float64",
}


def view_or_copy():
    out = {k: "view" for k in _VIEWS}
    out.update({k: "copy" for k in _COPIES})
    return out


def flatten_any(x):
    return torch.flatten(x)


def exercise_result():
    x = torch.zeros(6)
    x[0:3] += 1  # a = x[0] is a view of the first row
    # b = x[:, [0, 2]] is a copy: b += 10 leaves x alone
    x[2 * 2 + 1] = 5  # c = x.reshape(3, 2) is a view; c[2, 1] is flat index 5
    return x.view(2, 3)
