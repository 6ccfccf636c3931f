"""Correct: the backward computed in NumPy in the inputs' dtype (stable softmax by row, mask from
A > 0) and brought back with torch.from_numpy; the Function keeps the inputs on ctx and calls
that NumPy backward."""

# torchgrader: whole-file
import numpy as np
import torch


def mlp_forward(X, W1, b1, W2, b2):
    return torch.addmm(b2, torch.relu(torch.addmm(b1, X, W1)), W2)


def _np_grads(X, y, W1, b1, W2, b2):
    X, W1, b1, W2, b2 = (t.detach().cpu().numpy() for t in (X, W1, b1, W2, b2))
    y = y.detach().cpu().numpy()
    n = X.shape[0]
    A = X @ W1 + b1
    H = np.maximum(A, 0)
    Z = H @ W2 + b2
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    dZ = E / E.sum(axis=1, keepdims=True)
    dZ[np.arange(n), y] -= 1
    dZ /= X.dtype.type(n)
    dA = (dZ @ W2.T) * (A > 0)
    out = {"W1": X.T @ dA, "b1": dA.sum(axis=0), "W2": H.T @ dZ, "b2": dZ.sum(axis=0)}
    return {k: torch.from_numpy(np.ascontiguousarray(v, dtype=X.dtype)) for k, v in out.items()}


def mlp_backward(X, y, W1, b1, W2, b2):
    return _np_grads(X, y, W1, b1, W2, b2)


class NumpyMLPLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        ctx.inputs = (X, y, W1, b1, W2, b2)
        Z = mlp_forward(X, W1, b1, W2, b2)
        return torch.nn.functional.cross_entropy(Z, y)

    @staticmethod
    def backward(ctx, grad_output):
        g = _np_grads(*ctx.inputs)
        return (None, None) + tuple(grad_output * g[k] for k in ("W1", "b1", "W2", "b2"))


def mlp_loss(X, y, W1, b1, W2, b2):
    return NumpyMLPLoss.apply(X, y, W1, b1, W2, b2)
