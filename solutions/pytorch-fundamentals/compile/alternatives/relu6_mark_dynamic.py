"""Correct: F.relu6 for relu+clamp, and mark_dynamic on the batch dimension of
each input (with the aot_eager backend) instead of dynamic=True."""
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F


class ChattyMLP(nn.Module):
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


class CompileFriendlyMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu6(self.fc1(x)))


def compile_dynamic(model):
    compiled = torch.compile(model, backend="aot_eager")

    def run(x):
        torch._dynamo.mark_dynamic(x, 0)
        return compiled(x)

    return run
