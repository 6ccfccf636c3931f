"""Misconception: Cube saves its output y = x^3 and uses it in place of x in
the derivative (3 * y^2 * grad_output)."""
# misconception: cube_uses_output

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
        return grad_output * 3 * y ** 2
