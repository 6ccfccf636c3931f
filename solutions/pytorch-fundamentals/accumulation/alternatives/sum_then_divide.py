"""Zeroes the existing gradients in place, backpropagates each micro-batch's *sum* loss
(mean times its size), and divides the accumulated gradients by n at the end."""

import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.detach_()
            p.grad.zero_()
    n = len(X)
    n_batches = math.ceil(n / micro_batch_size)
    for i in range(n_batches):
        sl = slice(i * micro_batch_size, min((i + 1) * micro_batch_size, n))
        xb, yb = X[sl], Y[sl]
        (loss_fn(model(xb), yb) * xb.shape[0]).backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.grad.div_(n)


def unscaled_factor(n_examples, micro_batch_size):
    return float(n_examples // micro_batch_size)
