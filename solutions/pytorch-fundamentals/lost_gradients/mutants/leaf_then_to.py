# misconception: non_leaf
"""Misconception: requires_grad=True first, then .to(device, dtype): the result of .to()
is a new non-leaf tensor whenever it converts, so .grad never fills in."""

import torch


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, requires_grad=True).to(device=device, dtype=dtype)
