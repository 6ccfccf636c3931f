"""Misconception: the straight-through backward returns ones (the identity's
local derivative) instead of multiplying by the upstream gradient."""
# misconception: ste_ignores_upstream

import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones_like(grad_output)
