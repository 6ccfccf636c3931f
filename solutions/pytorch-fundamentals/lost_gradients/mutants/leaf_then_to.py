# misconception: none
"""Misconception: requires_grad=True first, then .to(device, dtype): the result of .to()
is a new non-leaf tensor whenever it converts, so .grad never fills in."""
import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, requires_grad=True).to(device=device, dtype=dtype)


def intermediate_grad(w):
    w2 = w * 2
    w2.retain_grad()
    loss = (w2 ** 2).sum()
    loss.backward()
    return w2.grad


def diagnose():
    return {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}


def training_loss(logits, target):
    return F.cross_entropy(logits, target)
