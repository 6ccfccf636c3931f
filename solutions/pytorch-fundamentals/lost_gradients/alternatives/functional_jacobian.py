"""Correct: torch.autograd.functional.jacobian of the loss as a function of w2 (issue 44: every public
autograd API counts as autograd), the rest as the reference."""

import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)


def intermediate_grad(w):
    w2 = (w * 2).detach()
    return torch.autograd.functional.jacobian(lambda v: (v**2).sum(), w2)


def diagnose():
    return {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}


def training_loss(logits, target):
    return F.cross_entropy(logits, target)
