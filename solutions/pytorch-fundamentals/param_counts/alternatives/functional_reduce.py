"""Correct, functional style: functools.reduce and operator for the formulas, parameters_to_vector
for the count, and a ModuleDict whose forward calls F.linear on each layer's weights."""
import functools
import operator

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parameters_to_vector


def linear_param_count(d_in, d_out, bias=True):
    return operator.add(operator.mul(d_in, d_out), d_out * bool(bias))


def mlp_param_count(sizes):
    pairs = zip(sizes, sizes[1:])
    return functools.reduce(operator.add, (linear_param_count(a, b) for a, b in pairs), 0)


def count_parameters(model, trainable_only=True):
    kept = [p for p in model.parameters() if p.requires_grad or not trainable_only]
    return int(parameters_to_vector(kept).numel()) if kept else 0


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = nn.ModuleDict({str(i): nn.Linear(width, width) for i in range(n_layers)})

    def forward(self, x):
        last = len(self.layers) - 1
        for i in range(len(self.layers)):
            layer = self.layers[str(i)]
            x = F.linear(x, layer.weight, layer.bias)
            x = x if i == last else x.clamp_min(0)
        return x
