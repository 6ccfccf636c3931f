"""Misconception: Cube saves its output y = x^3 and recovers x^2 from it as y ** (2/3) in backward (NaN
wherever x is negative)."""
# misconception: cube_root_of_output

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 3
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * 3 * y ** (2 / 3)
