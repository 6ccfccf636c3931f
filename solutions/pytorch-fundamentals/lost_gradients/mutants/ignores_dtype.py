# misconception: ignores_dtype
"""Misconception: make_leaf forgets the dtype argument (always float32)."""

import torch


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, device=device, requires_grad=True)
