# misconception: softmax_wrong_dim
"""Misconception: the softmax normalises over the batch dimension (dim=0) instead of over
the classes of each example (dim=1)."""

import torch


def _forward_backward(X, y, W1, b1, W2, b2):
    n = X.shape[0]
    A = X @ W1 + b1
    H = torch.relu(A)
    Z = H @ W2 + b2
    Zs = Z - Z.max(dim=0, keepdim=True).values
    logsumexp = torch.log(torch.exp(Zs).sum(dim=0, keepdim=True))
    logP = Zs - logsumexp
    loss = -logP[torch.arange(n), y].mean()
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
