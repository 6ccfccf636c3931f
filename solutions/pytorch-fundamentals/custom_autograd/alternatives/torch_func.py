"""Correct: second derivative with torch.func (grad of grad, vmapped over the
flattened elements); Cube computes x * x ** 2 and multiplies (x * x) first."""
import torch
import torch.func


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * (x * x) * grad_output


def second_derivative(f, x):
    flat = x.detach().reshape(-1)
    d2 = torch.func.vmap(torch.func.grad(torch.func.grad(lambda t: f(t))))(flat)
    return d2.reshape(x.shape).to(x.dtype)
