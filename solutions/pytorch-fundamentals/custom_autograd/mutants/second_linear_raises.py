"""Misconception: the first derivative of a linear f is a constant with no graph, and the second
torch.autograd.grad call on it raises instead of giving zeros."""
# misconception: linear_raises
import torch


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        (d1,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
        (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2.detach()
