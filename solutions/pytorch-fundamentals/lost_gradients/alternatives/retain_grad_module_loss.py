"""Correct: randn then .to() on the default device (a no-op that keeps the leaf) before
requires_grad_; retain_grad with torch.autograd.backward; nn.CrossEntropyLoss as a module."""

# torchgrader: whole-file
import torch
from torch import nn


def make_leaf(shape, device="cpu", dtype=torch.float32):
    t = torch.randn(shape, dtype=dtype).to(device)
    return t.requires_grad_()


def intermediate_grad(w):
    w2 = w * 2
    w2.retain_grad()
    torch.autograd.backward((w2**2).sum())
    return w2.grad


def diagnose():
    return {3: "not_differentiable", 1: "non_leaf", 2: "not_retained"}


def training_loss(logits, target):
    return nn.CrossEntropyLoss()(logits, target)
