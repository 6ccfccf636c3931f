# misconception: reversed_layers
"""Misconception: LayerStack's forward walks its layers from the last to the first."""

import torch
import torch.nn as nn


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])

    def forward(self, x):
        layers = list(self.layers)[::-1]
        for i, layer in enumerate(layers):
            x = layer(x)
            if i < len(layers) - 1:
                x = torch.relu(x)
        return x
