"""Misconception: approximates the second derivative with a central finite
difference of f instead of differentiating through autograd (inexact)."""
# misconception: finite_differences

import torch


def second_derivative(f, x):
    h = 1e-4
    with torch.no_grad():
        return (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
