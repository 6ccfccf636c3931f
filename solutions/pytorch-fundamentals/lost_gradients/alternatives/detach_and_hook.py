"""Correct: build in float32 then convert and re-leaf with detach(); capture the
intermediate gradient with a tensor hook; cross-entropy written out with logsumexp."""

import torch


def make_leaf(shape, device="cpu", dtype=torch.float32):
    t = torch.randn(shape).to(device=device, dtype=dtype)
    return t.detach().requires_grad_(True)


def intermediate_grad(w):
    if not w.requires_grad:
        w = w.detach().requires_grad_(True)
    seen = []
    w2 = w * 2
    w2.register_hook(lambda g: seen.append(g.clone()))
    loss = (w2**2).sum()
    loss.backward()
    return seen[0]


def diagnose():
    return dict(zip([1, 2, 3], ["non_leaf", "not_retained", "not_differentiable"]))


def training_loss(logits, target):
    lse = torch.logsumexp(logits, dim=1)
    picked = logits.gather(1, target.view(-1, 1)).squeeze(1)
    return (lse - picked).mean()
