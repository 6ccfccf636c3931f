"""Misconception: takes the first derivative without create_graph=True, so it
is not differentiable and the second torch.autograd.grad call fails."""
# misconception: no_create_graph

import torch


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        y = f(x)
        (d1,) = torch.autograd.grad(y.sum(), x)
        (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2.detach()
