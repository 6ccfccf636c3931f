"""Misconception: averages the per-batch mean losses without weighting by
batch size, so a short last batch counts as much as a full one."""
# misconception: unweighted_batch_means

import torch


def epoch_loss(model, loader, loss_fn):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item()
            count += 1
    return total / count
