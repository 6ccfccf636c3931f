"""Misconception: the layers live in an nn.Sequential (parameter names net.0.*, net.3.*), so
ChattyMLP's state_dict (fc1.*, fc2.*) does not load strictly; otherwise right (torch.where)."""
# misconception: renamed_layers
import torch
import torch.nn as nn


class _Cap(nn.Module):
    def forward(self, h):
        return torch.where(h > 6.0, torch.full_like(h, 6.0), h)


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), _Cap(),
                                 nn.Linear(d_hidden, d_out))

    def forward(self, x):
        return self.net(x)


def compile_dynamic(model):
    return torch.compile(model, backend="eager", dynamic=True, fullgraph=True)
