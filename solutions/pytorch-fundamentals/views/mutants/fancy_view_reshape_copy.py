# misconception: fancy_view_and_reshape_copy
"""Has views and copies the wrong way round: believes fancy indexing returns a view and reshape a copy."""

import torch


def exercise_result():
    return torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 10.0]])
