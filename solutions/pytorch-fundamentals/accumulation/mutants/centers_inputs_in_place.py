# misconception: modifies_input
"""Misconception: the inputs are centred in place (X -= X.mean(0)) before accumulating: the caller's X changes
(and the gradients with it)."""
import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    X -= X.mean(dim=0)
    n = len(X)
    for start in range(0, n, micro_batch_size):
        xb = X[start : start + micro_batch_size]
        yb = Y[start : start + micro_batch_size]
        loss = loss_fn(model(xb), yb) * (len(xb) / n)
        loss.backward()
