# misconception: uniform_values
"""Misconception: torch.rand (uniform on [0, 1)) used where a standard normal tensor is required."""

import torch


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.rand(shape, device=device, dtype=dtype, requires_grad=True)
