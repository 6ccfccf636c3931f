"""Misconception: Cube's backward returns the local derivative 3x^2 and
forgets to multiply it by the upstream gradient grad_output."""
# misconception: cube_ignores_upstream

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2
