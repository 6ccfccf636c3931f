"""Correct: the cap is a non-persistent buffer (not in state_dict, so ChattyMLP's weights still
load strictly) used by torch.minimum; compile_dynamic compiles the module in place with
nn.Module.compile(dynamic=True) and returns it."""
import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.register_buffer("cap", torch.tensor(6.0), persistent=False)

    def forward(self, x):
        return self.fc2(torch.minimum(self.fc1(x).relu(), self.cap))


def compile_dynamic(model):
    model.compile(dynamic=True)
    return model
