# misconception: none
"""Misconception: removed .item() and the branch but kept a debug print;
print is a graph break for torch.compile."""
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
        h = torch.relu(self.fc1(x)).clamp(max=6.0)
        print("peak hidden activation:", h.max())
        return self.fc2(h)


def compile_dynamic(model):
    return torch.compile(model, dynamic=True)
