"""Misconception: returns the mean as a 0-d tensor instead of a Python float."""
# misconception: not_python_float

import torch


def epoch_loss(model, loader, loss_fn):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            n = len(x)
            total += loss_fn(model(x), y).item() * n
            count += n
    return torch.tensor(total / count)
