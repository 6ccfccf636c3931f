# misconception: select_copies
"""Believes an integer index (x[0]) copies the row, so a += 1 would leave x unchanged."""

import torch


def exercise_result():
    return torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
