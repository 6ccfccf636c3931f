"""Correct: per-example hand gradients mapped over the batch with torch.func.vmap (one-hot from
arange == target, mask from relu'), then averaged; the Function is once_differentiable and
returns None for inputs that do not need a gradient."""

# torchgrader: whole-file
import torch
from torch.autograd.function import once_differentiable


def mlp_forward(X, W1, b1, W2, b2):
    return torch.einsum("nh,hc->nc", torch.relu(torch.einsum("nd,dh->nh", X, W1) + b1), W2) + b2


def _one(x, t, W1, b1, W2, b2):
    a = x @ W1 + b1
    h = torch.relu(a)
    z = h @ W2 + b2
    dz = torch.softmax(z, dim=0) - (torch.arange(z.shape[0]) == t).to(z.dtype)
    da = (W2 @ dz) * (a > 0).to(z.dtype)
    return torch.outer(x, da), da, torch.outer(h, dz), dz


def mlp_backward(X, y, W1, b1, W2, b2):
    per = torch.func.vmap(_one, in_dims=(0, 0, None, None, None, None))(X, y, W1, b1, W2, b2)
    return dict(zip(("W1", "b1", "W2", "b2"), (g.mean(dim=0) for g in per)))


class VmapLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        ctx.save_for_backward(X, y, W1, b1, W2, b2)
        Z = mlp_forward(X, W1, b1, W2, b2)
        return (torch.logsumexp(Z, dim=1) - Z[torch.arange(Z.shape[0]), y]).mean()

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        X, y, W1, b1, W2, b2 = ctx.saved_tensors
        grads = mlp_backward(X, y, W1, b1, W2, b2)
        needs = ctx.needs_input_grad
        return (None, None, *(g * grads[k] if needs[i + 2] else None for i, k in enumerate(("W1", "b1", "W2", "b2"))))


def mlp_loss(X, y, W1, b1, W2, b2):
    return VmapLoss.apply(X, y, W1, b1, W2, b2)
