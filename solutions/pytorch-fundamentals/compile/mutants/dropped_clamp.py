# misconception: none
"""Misconception: treated the whole chatty block as logging and removed it,
clamp included, so the function changes whenever an activation exceeds 6."""
import torch
import torch.nn as nn


class ChattyMLP(nn.Module):
    """A working MLP whose forward torch.compile cannot capture in one graph."""

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


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def compile_dynamic(model):
    return torch.compile(model, dynamic=True)
