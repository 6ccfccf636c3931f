# misconception: none
"""Misconception: Cube saves its output y = x^3 and uses it in place of x in
the derivative (3 * y^2 * grad_output)."""
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
        y = x ** 3
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * 3 * y ** 2


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        y = f(x)
        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        if not d1.requires_grad:      # f linear: f' does not depend on x
            return torch.zeros_like(x).detach()
        (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2.detach()
