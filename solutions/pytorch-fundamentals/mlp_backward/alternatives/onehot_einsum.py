"""Correct: softmax minus one-hot, einsum for the weight gradients, mask taken on H,
custom Function that saves the inputs and recomputes in backward."""

import torch
import torch.nn.functional as F


def mlp_forward(X, W1, b1, W2, b2):
    return F.relu(X @ W1 + b1) @ W2 + b2


def _grads(X, y, W1, b1, W2, b2):
    n = X.shape[0]
    H = F.relu(torch.addmm(b1, X, W1))
    Z = torch.addmm(b2, H, W2)
    Y = F.one_hot(y, num_classes=Z.shape[1]).to(Z.dtype)
    G = (torch.softmax(Z, dim=1) - Y) / n
    dH = torch.einsum("nc,hc->nh", G, W2)
    dA = torch.where(H > 0, dH, torch.zeros_like(dH))
    return {
        "W1": torch.einsum("nd,nh->dh", X, dA),
        "b1": torch.einsum("nh->h", dA),
        "W2": torch.einsum("nh,nc->hc", H, G),
        "b2": torch.einsum("nc->c", G),
    }


def mlp_backward(X, y, W1, b1, W2, b2):
    return _grads(X, y, W1, b1, W2, b2)


class MLPLossFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        ctx.save_for_backward(X, y, W1, b1, W2, b2)
        Z = mlp_forward(X, W1, b1, W2, b2)
        return (torch.logsumexp(Z, dim=1) - Z.gather(1, y[:, None]).squeeze(1)).mean()

    @staticmethod
    def backward(ctx, g):
        X, y, W1, b1, W2, b2 = ctx.saved_tensors
        grads = _grads(X, y, W1, b1, W2, b2)
        out = [None, None]
        for name, needed in zip(("W1", "b1", "W2", "b2"), ctx.needs_input_grad[2:]):
            out.append(g * grads[name] if needed else None)
        return tuple(out)


def mlp_loss(X, y, W1, b1, W2, b2):
    return MLPLossFn.apply(X, y, W1, b1, W2, b2)
