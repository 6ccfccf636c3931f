# misconception: none
"""Divides every micro-batch loss by the number of micro-batches: right only when all
micro-batches have the same size; wrong when the last one is shorter."""
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad()
    n_batches = math.ceil(len(X) / micro_batch_size)
    for start in range(0, len(X), micro_batch_size):
        xb, yb = X[start:start + micro_batch_size], Y[start:start + micro_batch_size]
        (loss_fn(model(xb), yb) / n_batches).backward()


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
