"""Misconception: removed .item() and the branch but kept a debug print;
print is a graph break for torch.compile."""
# misconception: print_in_forward

import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x)).clamp(max=6.0)
        print("peak hidden activation:", h.max())
        return self.fc2(h)
