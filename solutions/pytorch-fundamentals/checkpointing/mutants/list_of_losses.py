"""Misconception: collects the loss tensors in a list (graphs and all) and
averages at the end; memory grows with the number of batches."""
# misconception: keeps_graphs

import torch


def epoch_loss(model, loader, loss_fn):
    losses, sizes = [], []
    for x, y in loader:
        losses.append(loss_fn(model(x), y))
        sizes.append(len(x))
    total = sum(l * n for l, n in zip(losses, sizes))
    return float(total) / sum(sizes)
