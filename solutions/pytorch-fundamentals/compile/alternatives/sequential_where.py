"""Correct: an nn.Sequential body (different parameter names), the branch
replaced by torch.where, and dynamic=True with the eager backend."""
import torch
import torch.nn as nn


class ChattyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        peak = h.max().item()
        print(f"peak hidden activation: {peak:.3f}")
        if peak > 6.0:
            h = h.clamp(max=6.0)
        return self.fc2(h)


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
