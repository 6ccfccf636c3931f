"""Tries x.view(x.numel()) and falls back to torch.flatten of a contiguous copy only when
view refuses; shares_storage through the storage's own data pointer and the device; the
snippet's result written out as a literal."""

# torchgrader: whole-file
import torch


def shares_storage(a, b):
    if a.device != b.device:
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def view_or_copy():
    views = "basic_slice select transpose permute expand unsqueeze narrow reshape_contiguous detach"
    copies = "fancy_index bool_mask reshape_transposed contiguous_of_transposed clone arithmetic cat to_float64"
    return dict([(k, "view") for k in views.split()] + [(k, "copy") for k in copies.split()])


def flatten_any(x):
    try:
        return x.view(x.numel())
    except RuntimeError:
        return torch.flatten(x.contiguous())


def exercise_result():
    return torch.tensor([[1, 1, 1], [0, 0, 5]], dtype=torch.float32)
