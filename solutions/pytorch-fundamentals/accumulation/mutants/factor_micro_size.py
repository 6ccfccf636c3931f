# misconception: none
"""unscaled_factor confuses the number of micro-batches with the micro-batch size."""
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    n = len(X)
    for start in range(0, n, micro_batch_size):
        xb, yb = X[start:start + micro_batch_size], Y[start:start + micro_batch_size]
        (loss_fn(model(xb), yb) * (len(xb) / n)).backward()


def unscaled_factor(n_examples, micro_batch_size):
    return float(micro_batch_size)
