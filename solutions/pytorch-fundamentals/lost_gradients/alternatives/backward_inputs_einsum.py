"""Correct: randn(*shape) straight on the device; backward(inputs=[w2]) fills the intermediate's
.grad directly; the cross-entropy written out with a max-shifted log-sum-exp and an einsum that
picks each example's target logit."""

# torchgrader: whole-file
import torch
import torch.nn.functional as F


def make_leaf(shape, device="cpu", dtype=torch.float32):
    return torch.randn(*shape, device=device, dtype=dtype).requires_grad_(True)


def intermediate_grad(w):
    w2 = w * 2
    (w2**2).sum().backward(inputs=[w2])
    return w2.grad


def diagnose():
    answers = {"non_leaf": 1, "not_retained": 2, "not_differentiable": 3}
    return {k: v for v, k in answers.items()}


def training_loss(logits, target):
    m = logits.max(dim=1, keepdim=True).values.detach()
    lse = m.squeeze(1) + (logits - m).exp().sum(dim=1).log()
    onehot = F.one_hot(target, num_classes=logits.shape[1]).to(logits.dtype)
    picked = torch.einsum("nc,nc->n", logits, onehot)
    return (lse - picked).mean()
