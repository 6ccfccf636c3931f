# misconception: none
"""Misconception: the straight-through backward returns ones (the identity's
local derivative) instead of multiplying by the upstream gradient."""
import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones_like(grad_output)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        y = f(x)
        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        if not d1.requires_grad:      # f linear: f' does not depend on x
            return torch.zeros_like(x).detach()
        (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2.detach()
