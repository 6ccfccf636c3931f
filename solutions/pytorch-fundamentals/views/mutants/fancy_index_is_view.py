# misconception: fancy_index_view
"""Believes fancy indexing (x[:, [0, 2]]) returns a view, so b += 10 would change x."""

import torch


def exercise_result():
    return torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 5.0]])
