# misconception: sums_outputs
"""Misconception: each micro-batch's loss is summed over examples and outputs (reduction="sum") and divided by
len(X): with several outputs per example the gradient is too large by the number of outputs (right only for
one output per example, as with cross-entropy)."""
import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    n = len(X)
    for start in range(0, n, micro_batch_size):
        xb = X[start : start + micro_batch_size]
        yb = Y[start : start + micro_batch_size]
        loss = loss_fn(model(xb), yb, reduction="sum") / n  # sums the outputs of each example too
        loss.backward()

