"""Misconception: evaluation code calls model.eval() and leaves the model there, so a model found in
train mode is evaluated in eval mode (BatchNorm's running statistics, no dropout) and stays in eval
mode for the training that follows."""
# misconception: switches_to_eval
import torch


def epoch_loss(model, loader, loss_fn):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item() * len(x)
            count += len(x)
    return total / count
