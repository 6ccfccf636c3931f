"""Correct: compiles the bound method model.forward (not the module) with a dynamic
batch dimension. Dynamo then traces the forward of a class defined in the grader's
probes, so the probes must be importable modules (issue 11, class 1)."""
import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.clamp(torch.relu(self.fc1(x)), max=6.0))


def compile_dynamic(model):
    return torch.compile(model.forward, dynamic=True)
