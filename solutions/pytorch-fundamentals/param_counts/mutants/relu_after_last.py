"""Misconception: ReLU is applied after every layer, the last one included."""
# misconception: relu_after_last

import torch
from torch import nn


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            x = torch.relu(x)
        return x
