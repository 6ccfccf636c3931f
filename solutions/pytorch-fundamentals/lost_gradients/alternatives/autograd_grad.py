"""Correct: torch.autograd.grad for the intermediate, dtype-then-device construction,
log_softmax + nll_loss for the loss."""

import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    t = torch.empty(shape, dtype=dtype, device=device).normal_()
    return t.requires_grad_()


def intermediate_grad(w):
    w2 = w * 2
    loss = (w2**2).sum()
    (g,) = torch.autograd.grad(loss, w2)
    return g


def diagnose():
    d = {}
    d[3] = "not_differentiable"
    d[2] = "not_retained"
    d[1] = "non_leaf"
    return d


def training_loss(logits, target):
    return F.nll_loss(F.log_softmax(logits, dim=-1), target)
