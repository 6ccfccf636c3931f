# misconception: divides_by_micro_batch_size
"""Scales every micro-batch's mean loss by 1 / micro_batch_size, confusing the size of a
micro-batch with its weight in the mean over the whole batch."""

import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    for start in range(0, len(X), micro_batch_size):
        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
        (loss_fn(model(xb), yb) / micro_batch_size).backward()
