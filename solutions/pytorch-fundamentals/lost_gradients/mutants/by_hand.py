# misconception: none
"""Misconception: computes the intermediate gradient by hand (4 * w) instead of obtaining it
from autograd, which is the point of the exercise."""
import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)


def intermediate_grad(w):
    return 4 * w.detach()


def diagnose():
    return {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}


def training_loss(logits, target):
    return F.cross_entropy(logits, target)
