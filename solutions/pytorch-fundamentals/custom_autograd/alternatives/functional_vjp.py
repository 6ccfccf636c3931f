"""Correct: torch.autograd.functional.vjp of the first derivative for second_derivative (a linear f
gives zeros, strict=False); once_differentiable backwards; ctx attributes instead of
save_for_backward; in-place arithmetic on fresh tensors."""
import torch
from torch.autograd.function import once_differentiable


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x, decimals=0)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output.clone()


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x.detach()
        out = x.clone()
        out.mul_(x).mul_(x)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        local = ctx.x.square()
        local.mul_(3)
        return local.mul_(grad_output)


def second_derivative(f, x):
    def first(t):
        (d1,) = torch.autograd.grad(f(t).sum(), t, create_graph=True)
        return d1

    def first_or_zero(t):
        with torch.enable_grad():
            t = t.requires_grad_(True) if not t.requires_grad else t
            return first(t)

    _, d2 = torch.autograd.functional.vjp(first_or_zero, x.detach().clone(), torch.ones_like(x))
    return d2.detach()
