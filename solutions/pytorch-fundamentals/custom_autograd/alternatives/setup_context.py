"""Correct: new-style Functions (forward without ctx + setup_context),
x * x * x, and grad with explicit grad_outputs plus allow_unused handling."""
import torch
from torch.autograd import Function


class StraightThroughRound(Function):
    @staticmethod
    def forward(x):
        return x.round()

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clone()


class Cube(Function):
    @staticmethod
    def forward(x):
        return x * x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3.0 * x.pow(2) * grad_output


def second_derivative(f, x):
    xr = x.detach().clone().requires_grad_()
    with torch.enable_grad():
        out = f(xr)
        first, = torch.autograd.grad(out, xr, grad_outputs=torch.ones_like(out),
                                     create_graph=True)
        if first.grad_fn is None:
            return torch.zeros_like(x)
        second, = torch.autograd.grad(first, xr, grad_outputs=torch.ones_like(first),
                                      allow_unused=True)
    if second is None:
        return torch.zeros_like(x)
    return second.detach()
