"""Misconception: stops after one differentiation and returns the first derivative f'(x)."""
# misconception: first_derivative
import torch


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        (d1,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    return d1.detach()
