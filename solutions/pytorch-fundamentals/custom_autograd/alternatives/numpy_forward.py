"""Correct, NumPy interop in forward (it runs without autograd anyway): numpy.round rounds ties to
even like torch.round, the cube is computed in NumPy; backwards in torch. second_derivative goes
through .backward(create_graph=True) and the input's .grad."""
import numpy as np
import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.from_numpy(np.round(x.detach().cpu().numpy())).to(x.device)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.power(x.detach().cpu().numpy(), 3)).to(x.device)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x * x * 3


def second_derivative(f, x):
    leaf = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        f(leaf).sum().backward(create_graph=True)
        first = leaf.grad
        if first is None or first.grad_fn is None:
            return torch.zeros_like(x)
        (second,) = torch.autograd.grad(first, leaf, torch.ones_like(first))
    return second.detach()
