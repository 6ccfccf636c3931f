"""Misconception: dropped .item() and print but kept a Python `if` on a
tensor's value (`if h.max() > 6`), a data-dependent branch."""
# misconception: tensor_branch

import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if h.max() > 6.0:
            h = h.clamp(max=6.0)
        return self.fc2(h)
