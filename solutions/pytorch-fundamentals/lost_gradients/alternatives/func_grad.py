"""Correct: torch.normal for the values, torch.func.grad of the loss as a function of w2,
cross-entropy from log_softmax picked with one-hot weights."""

import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    t = torch.normal(0.0, 1.0, size=tuple(shape), dtype=dtype, device=device)
    t.requires_grad = True
    return t


def intermediate_grad(w):
    w2 = w * 2
    return torch.func.grad(lambda v: (v**2).sum())(w2.detach())


def diagnose():
    causes = ["non_leaf", "not_retained", "not_differentiable"]
    return {i + 1: c for i, c in enumerate(causes)}


def training_loss(logits, target):
    logp = F.log_softmax(logits, dim=1)
    onehot = F.one_hot(target, num_classes=logits.shape[1]).to(logits.dtype)
    return -(logp * onehot).sum(dim=1).mean()
