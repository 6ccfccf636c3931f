"""Correct, NumPy interop where it is safe: the formula in Python ints (object arrays never
overflow), the count from named_parameters() (which already skips duplicates), and a layer stack that
is a subclass of nn.Sequential with an explicit forward."""
import numpy as np
import torch
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    return int(np.array([d_in], dtype=object)[0] * d_out + (d_out if bias else 0))


def mlp_param_count(sizes):
    w = np.array(list(sizes), dtype=object)
    if len(w) < 2:
        return 0
    return int(np.sum(w[:-1] * w[1:] + w[1:]))


def count_parameters(model, trainable_only=True):
    total = 0
    for _, p in model.named_parameters():
        if p.requires_grad or not trainable_only:
            total += p.numel()
    return total


class LayerStack(nn.Sequential):
    def __init__(self, n_layers, width):
        super().__init__(*[nn.Linear(width, width) for _ in range(n_layers)])

    def forward(self, x):
        for i, layer in enumerate(self):
            if i:
                x = nn.functional.relu(x)
            x = layer(x)
        return x
