"""Misconception: n_layers counted as the number of hidden layers: builds n_layers + 1 Linear layers."""
# misconception: extra_layer

import torch
from torch import nn


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers + 1)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
