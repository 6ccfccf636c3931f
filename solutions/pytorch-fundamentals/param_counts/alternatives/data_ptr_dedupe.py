"""Correct: counts each parameter once by walking every module's own parameters and keying them by
storage address; LayerStack registers its layers with register_module and runs them recursively."""
import torch
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    count = d_out * d_in
    return count + d_out if bias else count


def mlp_param_count(sizes):
    if len(sizes) < 2:
        return 0
    return linear_param_count(sizes[0], sizes[1]) + mlp_param_count(sizes[1:])


def count_parameters(model, trainable_only=True):
    by_address = {}
    for _, module in model.named_modules(remove_duplicate=False):
        for _, p in module.named_parameters(recurse=False):
            if trainable_only and not p.requires_grad:
                continue
            by_address[(p.data_ptr(), p.shape)] = p.numel()
    return sum(by_address.values())


class LayerStack(nn.Module):
    def __init__(self, n_layers, width):
        super().__init__()
        self.depth = n_layers
        for i in range(n_layers):
            self.register_module(f"linear_{i}", nn.Linear(width, width))

    def _run(self, x, i):
        y = getattr(self, f"linear_{i}")(x)
        if i == self.depth - 1:
            return y
        return self._run(torch.relu(y), i + 1)

    def forward(self, x):
        return self._run(x, 0)
