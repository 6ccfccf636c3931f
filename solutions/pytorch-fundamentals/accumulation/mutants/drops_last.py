# misconception: none
"""Loops over len(X) // micro_batch_size full micro-batches only, silently dropping the
short last one (and its examples)."""
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad()
    k = len(X) // micro_batch_size
    used = k * micro_batch_size
    for i in range(k):
        xb = X[i * micro_batch_size:(i + 1) * micro_batch_size]
        yb = Y[i * micro_batch_size:(i + 1) * micro_batch_size]
        (loss_fn(model(xb), yb) * (len(xb) / used)).backward()


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
