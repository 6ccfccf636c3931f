# misconception: none
"""Misconception: the layers are kept in a plain Python list, so nn.Module never registers them (no
parameters, no state_dict entries, .to() skips them)."""
import torch
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    return d_in * d_out + (d_out if bias else 0)


def mlp_param_count(sizes):
    return sum(linear_param_count(a, b) for a, b in zip(sizes[:-1], sizes[1:]))


def count_parameters(model, trainable_only=True):
    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
    # buffers are not parameters.
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = [nn.Linear(width, width) for _ in range(n_layers)]

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
