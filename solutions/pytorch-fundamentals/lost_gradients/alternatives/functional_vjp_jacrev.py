"""Correct: torch.autograd.functional.vjp on float64 and torch.func.jacrev otherwise (issue 44: every public
autograd API counts as autograd), the rest as the reference."""

import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)


def _loss(v):
    return (v**2).sum()


def intermediate_grad(w):
    w2 = (w * 2).detach()
    if w2.dtype == torch.float64:
        _, g = torch.autograd.functional.vjp(_loss, w2)
        return g
    return torch.func.jacrev(_loss)(w2)


def diagnose():
    return {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}


def training_loss(logits, target):
    return F.cross_entropy(logits, target)
