"""Misconception: Cube's backward multiplies the upstream gradient by the forward value x^3
instead of by the derivative 3x^2."""
# misconception: cube_forward_in_backward
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x ** 3
