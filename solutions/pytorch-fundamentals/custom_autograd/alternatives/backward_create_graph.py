"""Correct: Cube saves x and multiplies in another order; second derivative
through .backward(create_graph=True) and the leaf's .grad, twice."""
import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.pow(3)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g.mul(x.square()).mul(3)


def second_derivative(f, x):
    leaf = x.detach().clone()
    leaf.requires_grad = True
    with torch.enable_grad():
        f(leaf).sum().backward(create_graph=True)
        first = leaf.grad
        leaf.grad = None
        if first.grad_fn is None:
            return torch.zeros_like(x)
        first.sum().backward()
    out = leaf.grad.detach().clone()
    leaf.grad = None
    return out
