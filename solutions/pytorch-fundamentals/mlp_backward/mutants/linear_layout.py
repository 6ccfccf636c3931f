# misconception: transposed_layout
"""Misconception: lays the weight gradients out like nn.Linear.weight (out, in), i.e. transposed
with respect to W1 (d, h) and W2 (h, C)."""

import torch


def _forward_backward(X, y, W1, b1, W2, b2):
    n = X.shape[0]
    A = X @ W1 + b1
    H = torch.relu(A)
    Z = H @ W2 + b2
    Zs = Z - Z.max(dim=1, keepdim=True).values  # stable softmax
    logsumexp = torch.log(torch.exp(Zs).sum(dim=1, keepdim=True))
    logP = Zs - logsumexp
    loss = -logP[torch.arange(n), y].mean()
    dZ = torch.exp(logP)
    dZ[torch.arange(n), y] -= 1
    dZ = dZ / n
    grads = {
        "W2": dZ.T @ H,
        "b2": dZ.sum(dim=0),
    }
    dH = dZ @ W2.T
    dA = dH * (A > 0).to(dH.dtype)
    grads["W1"] = dA.T @ X
    grads["b1"] = dA.sum(dim=0)
    return loss, grads
