"""Misconception: the cap is registered as a (persistent) buffer, so the model's state_dict has a
key ChattyMLP's lacks and a strict load_state_dict(chatty.state_dict()) fails."""
# misconception: extra_state
import torch
import torch.nn as nn


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.register_buffer("cap", torch.tensor(6.0))

    def forward(self, x):
        return self.fc2(torch.minimum(torch.relu(self.fc1(x)), self.cap))
