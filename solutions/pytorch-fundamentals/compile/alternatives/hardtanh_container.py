"""Correct: F.hardtanh(h, 0, 6) after fc1 (it is relu and the cap at once), and compile_dynamic compiles
the model wrapped in an nn.Sequential container, fullgraph and dynamic."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.hardtanh(self.fc1(x), 0.0, 6.0))


def compile_dynamic(model):
    return torch.compile(nn.Sequential(model), dynamic=True, fullgraph=True)
