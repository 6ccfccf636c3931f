"""Misconception: the backward returns round's true derivative (zero almost
everywhere), which is exactly what the straight-through estimator avoids."""
# misconception: ste_zero_grad

import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return torch.zeros_like(grad_output)
