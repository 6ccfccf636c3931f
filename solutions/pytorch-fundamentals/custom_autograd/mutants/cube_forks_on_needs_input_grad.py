"""Misconception (an attack): Cube computes something else when ctx.needs_input_grad is False (as
in a no-grad finite-difference probe), so finite differences agree with a wrong backward (2x)."""
# misconception: none
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3 if ctx.needs_input_grad[0] else x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x
