"""Correct, explicit loops and in-place updates: shape products by hand, a list of already-seen
parameters compared with `is`, and a ModuleList with an in-place ReLU between layers."""
import torch
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    if d_out > 10_000:  # too many rows to add one by one
        return d_in * d_out + (d_out if bias else 0)
    total = 0
    for _ in range(d_out):
        total += d_in
    if bias:
        total += d_out
    return total


def mlp_param_count(sizes):
    total = 0
    for i in range(len(sizes) - 1):
        total += sizes[i] * sizes[i + 1]
        total += sizes[i + 1]
    return total


def count_parameters(model, trainable_only=True):
    seen = []
    total = 0
    for module in model.modules():
        for p in module._parameters.values():
            if p is None or any(p is q for q in seen):
                continue
            seen.append(p)
            if p.requires_grad or not trainable_only:
                n = 1
                for d in p.shape:
                    n *= d
                total += n
    return total


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.blocks = nn.ModuleList()
        for _ in range(n_layers):
            self.blocks.append(nn.Linear(width, width))

    def forward(self, x):
        n = len(self.blocks)
        for i in range(n):
            x = self.blocks[i](x)
            if i != n - 1:
                torch.relu_(x)
        return x
