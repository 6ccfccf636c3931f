# misconception: zero_inside_loop
"""Calls zero_grad inside the micro-batch loop (as in a plain training loop): only the last
micro-batch gradient survives."""

import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    n = len(X)
    for start in range(0, n, micro_batch_size):
        model.zero_grad()
        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
        (loss_fn(model(xb), yb) * (len(xb) / n)).backward()
