"""Misconception: the cap at 6 is applied to the output logits instead of the hidden activations."""
# misconception: clamp_output
import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))).clamp(max=6.0)
