"""Correct: layers registered one by one with add_module and looked up by name; counting via
a set of parameters over modules (each module's own parameters)."""
import torch
import torch.nn.functional as F
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    n = d_in * d_out
    if bias:
        n += d_out
    return n


def mlp_param_count(sizes):
    total = 0
    for i in range(1, len(sizes)):
        total += linear_param_count(sizes[i - 1], sizes[i], True)
    return total


def count_parameters(model, trainable_only=True):
    distinct = set()
    for module in model.modules():
        for p in module.parameters(recurse=False):
            if p.requires_grad or not trainable_only:
                distinct.add(p)
    return sum(p.numel() for p in distinct)


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.n_layers = n_layers
        for i in range(n_layers):
            self.add_module(f"layer{i}", nn.Linear(width, width))

    def forward(self, x):
        for i in range(self.n_layers):
            x = getattr(self, f"layer{i}")(x)
            if i + 1 < self.n_layers:
                x = F.relu(x)
        return x
