# misconception: none
"""Misconception: draws the values with NumPy's generator, so torch.manual_seed does not make
make_leaf reproducible (the values do not follow torch's global generator)."""
import numpy as np
import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    values = np.random.randn(*shape)
    return torch.from_numpy(values).to(device=device, dtype=dtype).requires_grad_()


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
