# misconception: none
"""Misconception: approximates the second derivative with a central finite
difference of f instead of differentiating through autograd (inexact)."""
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
        return grad_output * 3 * x ** 2


def second_derivative(f, x):
    h = 1e-4
    with torch.no_grad():
        return (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
