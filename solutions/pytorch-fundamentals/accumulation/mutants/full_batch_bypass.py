# misconception: full_batch
"""Computes the full-batch loss through type(model).forward(model, X), believing that a call
that bypasses model(...) (and anything wrapped around model.forward) is not a forward pass:
the whole batch still goes through the network at once."""

import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    loss_fn(type(model).forward(model, X), Y).backward()
