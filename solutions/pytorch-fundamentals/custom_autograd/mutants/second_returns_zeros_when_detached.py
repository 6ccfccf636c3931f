"""Misconception: without create_graph the first derivative has no graph; the
code then 'handles' it by returning zeros, so every f gets f'' = 0."""
# misconception: no_create_graph

import torch


def second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        y = f(x)
        (d1,) = torch.autograd.grad(y.sum(), x)
        if not d1.requires_grad:      # f linear: f' does not depend on x
            return torch.zeros_like(x).detach()
        (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2.detach()
