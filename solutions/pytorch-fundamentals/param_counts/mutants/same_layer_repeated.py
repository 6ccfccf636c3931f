"""Misconception: builds one nn.Linear and repeats it n_layers times ([layer] * n), so all the
layers share a single set of weights."""
# misconception: shared_layer

import torch
from torch import nn


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width)] * n_layers)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
