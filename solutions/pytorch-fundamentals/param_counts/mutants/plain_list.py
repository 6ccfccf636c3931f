"""Misconception: the layers are kept in a plain Python list, so nn.Module never registers them (no
parameters, no state_dict entries, .to() skips them)."""
# misconception: unregistered_layers

import torch
from torch import nn


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
