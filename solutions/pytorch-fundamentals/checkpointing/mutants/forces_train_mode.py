"""Misconception: calls model.train() first 'to be safe', so a model found in eval mode is evaluated
with BatchNorm's batch statistics (and dropout) and is left in train mode."""
# misconception: forces_train_mode
import torch


def epoch_loss(model, loader, loss_fn):
    model.train()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item() * len(x)
            count += len(x)
    return total / count
