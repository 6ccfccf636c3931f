"""Misconception: treated the whole chatty block as logging and removed it,
clamp included, so the function changes whenever an activation exceeds 6."""
# misconception: dropped_clamp

import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
