# misconception: sum_reduction
"""Misconception: mlp_loss's forward sums the per-example losses over the batch instead of averaging them
(its hand-written backward is still the mean's)."""

import torch


def _forward_backward(X, y, W1, b1, W2, b2):
    n = X.shape[0]
    A = X @ W1 + b1
    H = torch.relu(A)
    Z = H @ W2 + b2
    Zs = Z - Z.max(dim=1, keepdim=True).values  # stable softmax
    logsumexp = torch.log(torch.exp(Zs).sum(dim=1, keepdim=True))
    logP = Zs - logsumexp
    loss = -logP[torch.arange(n), y].sum()
    dZ = torch.exp(logP)
    dZ[torch.arange(n), y] -= 1
    dZ = dZ / n
    grads = {
        "W2": H.T @ dZ,
        "b2": dZ.sum(dim=0),
    }
    dH = dZ @ W2.T
    dA = dH * (A > 0).to(dH.dtype)
    grads["W1"] = X.T @ dA
    grads["b1"] = dA.sum(dim=0)
    return loss, grads
