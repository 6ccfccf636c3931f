# misconception: none
"""Ignores micro_batch_size and runs the whole batch through the model at once (the
gradient is right but the memory saving is gone)."""
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad()
    loss_fn(model(X), Y).backward()


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
