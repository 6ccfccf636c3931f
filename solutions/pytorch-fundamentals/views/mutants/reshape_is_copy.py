# misconception: reshape_copy
"""Believes reshape copies, so c[2, 1] = 5 would leave x unchanged."""

import torch


def exercise_result():
    return torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
