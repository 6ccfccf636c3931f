"""Misconception: the layers are chained without the ReLU between them (a stack of linear layers
is itself just one linear map)."""
# misconception: no_relu
from torch import nn


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
