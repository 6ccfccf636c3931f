"""Misconception: removed the print but kept .item() and the Python `if` on
the scalar it returns; branching on a value read out of a tensor is a
data-dependent guard that dynamo cannot put in one graph."""
# misconception: item_branch

import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        peak = h.max().item()
        if peak > 6.0:
            h = h.clamp(max=6.0)
        return self.fc2(h)
