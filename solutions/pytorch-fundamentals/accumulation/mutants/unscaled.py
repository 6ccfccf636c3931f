# misconception: none
"""Backpropagates each micro-batch mean loss unscaled: the accumulated gradient is (number
of micro-batches) times too large."""
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad()
    for start in range(0, len(X), micro_batch_size):
        xb, yb = X[start:start + micro_batch_size], Y[start:start + micro_batch_size]
        loss_fn(model(xb), yb).backward()


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
