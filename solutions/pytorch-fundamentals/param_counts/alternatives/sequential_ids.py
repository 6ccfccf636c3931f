"""Correct: dedupe by tensor identity over named_parameters(remove_duplicate=False); an
nn.Sequential with interleaved ReLU modules."""
import math

import torch
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    return int(d_out * (d_in + int(bool(bias))))


def mlp_param_count(sizes):
    sizes = list(sizes)
    weights = sum(a * b for a, b in zip(sizes, sizes[1:]))
    biases = sum(sizes[1:])
    return weights + biases


def count_parameters(model, trainable_only=True):
    seen = {}
    for _, p in model.named_parameters(remove_duplicate=False):
        if trainable_only and not p.requires_grad:
            continue
        seen[id(p)] = math.prod(p.shape)
    return sum(seen.values())


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        mods = []
        for i in range(n_layers):
            if i > 0:
                mods.append(nn.ReLU())
            mods.append(nn.Linear(width, width))
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)
