"""Misconception: adds up the per-batch mean losses and forgets to divide at all."""
# misconception: sum_of_batch_means
import torch


def epoch_loss(model, loader, loss_fn):
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item()
    return total
