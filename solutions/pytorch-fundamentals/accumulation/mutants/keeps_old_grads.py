# misconception: none
"""Forgets to clear the gradients already in .grad before accumulating: stale gradients
from earlier calls are added in."""
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    n = len(X)
    for start in range(0, n, micro_batch_size):
        xb, yb = X[start:start + micro_batch_size], Y[start:start + micro_batch_size]
        (loss_fn(model(xb), yb) * (len(xb) / n)).backward()


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
