"""Misconception (tampering): keeps the chatty forward and replaces
torch.compile by a function returning the model unchanged, so that a
fullgraph compile 'succeeds'. The grader must not be fooled."""
# misconception: tampers_compile, print_in_forward, item_branch

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
        print(f"peak hidden activation: {peak:.3f}")
        if peak > 6.0:
            h = h.clamp(max=6.0)
        return self.fc2(h)


def _no_compile(model=None, **kwargs):
    if model is None:
        return lambda m: m
    return model


torch.compile = _no_compile


def compile_dynamic(model):
    return model
