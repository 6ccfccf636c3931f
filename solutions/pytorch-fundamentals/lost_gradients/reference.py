import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    # Create the tensor directly where and how it should live, then ask for grad:
    # no operation ever touches it afterwards, so it stays a leaf.
    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)


def intermediate_grad(w):
    w2 = w * 2
    w2.retain_grad()
    loss = (w2**2).sum()
    loss.backward()
    return w2.grad


def diagnose():
    return {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}


def training_loss(logits, target):
    return F.cross_entropy(logits, target)
