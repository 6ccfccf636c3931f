"""Index blocks from arange(n).split(m) and index_select; gradients zeroed in place; each
micro-batch's sum (mean times its size) backpropagated, the total scaled by 1/n in place."""

# torchgrader: whole-file
import math

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=False)
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
    n = X.shape[0]
    for idx in torch.arange(n).split(micro_batch_size):
        xb, yb = X.index_select(0, idx), Y.index_select(0, idx)
        (loss_fn(model(xb), yb) * idx.numel()).backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(1.0 / n)


def unscaled_factor(n_examples, micro_batch_size):
    return float(math.ceil(n_examples / micro_batch_size))
