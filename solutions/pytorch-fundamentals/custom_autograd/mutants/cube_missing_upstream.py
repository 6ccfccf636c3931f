# misconception: none
"""Misconception: Cube's backward returns the local derivative 3x^2 and
forgets to multiply it by the upstream gradient grad_output."""
import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output          # straight through: d(round)/dx treated as 1


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        y = f(x)
        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        if not d1.requires_grad:      # f linear: f' does not depend on x
            return torch.zeros_like(x).detach()
        (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2.detach()
