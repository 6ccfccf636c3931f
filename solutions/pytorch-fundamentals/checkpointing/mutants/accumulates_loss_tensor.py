"""Misconception: accumulates `total += loss * n` as a tensor with autograd on,
which keeps every batch's graph alive until the end of the epoch."""
# misconception: keeps_graphs

import torch


def epoch_loss(model, loader, loss_fn):
    total, count = 0.0, 0
    for x, y in loader:
        n = len(x)
        total = total + loss_fn(model(x), y) * n
        count += n
    return (total / count).item()
