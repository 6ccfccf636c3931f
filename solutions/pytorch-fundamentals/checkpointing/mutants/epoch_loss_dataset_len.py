# misconception: divides_by_dataset_len
"""Misconception: epoch_loss divides the summed loss by len(loader.dataset), the number of samples seen only when
the loader visits every sample of its dataset once."""
import torch


def epoch_loss(model, loader, loss_fn):
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item() * len(x)
    return total / len(loader.dataset)
