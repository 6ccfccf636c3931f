"""Storage base recovered from data_ptr and storage_offset; the table is derived
empirically; flatten by trying view first and copying on failure."""

import torch


def shares_storage(a, b):
    base_a = a.data_ptr() - a.storage_offset() * a.element_size()
    base_b = b.data_ptr() - b.storage_offset() * b.element_size()
    return base_a == base_b


def view_or_copy():
    x = torch.randn(4, 6)
    ops = {
        "basic_slice": lambda: x[1:, ::2],
        "select": lambda: x[:, 1],
        "transpose": lambda: x.T,
        "permute": lambda: x.permute(1, 0),
        "expand": lambda: x[:1].expand(4, 6),
        "unsqueeze": lambda: x.unsqueeze(0),
        "narrow": lambda: x.narrow(0, 1, 2),
        "fancy_index": lambda: x[[0, 2]],
        "bool_mask": lambda: x[x > 0],
        "reshape_contiguous": lambda: x.reshape(6, 4),
        "reshape_transposed": lambda: x.T.reshape(-1),
        "contiguous_of_transposed": lambda: x.T.contiguous(),
        "clone": lambda: x.clone(),
        "detach": lambda: x.detach(),
        "arithmetic": lambda: x + 1,
        "cat": lambda: torch.cat([x]),
        "to_float64": lambda: x.to(torch.float64),
    }
    return {k: ("view" if shares_storage(x, f()) else "copy") for k, f in ops.items()}


def flatten_any(x):
    try:
        return x.view(-1)
    except RuntimeError:
        return x.contiguous().view(-1)


def exercise_result():
    return torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 5.0]])
