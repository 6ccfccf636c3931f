# twin: switches_to_eval
# forges: test_epoch_loss_keeps_the_mode_it_found
"""epoch_loss switches the model to eval mode and sets back only the container's `training` flag: every
layer stays in eval mode while model.training reads as it was found."""
import torch


def epoch_loss(model, loader, loss_fn):
    was = model.training
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item() * len(x)
            n += len(x)
    model.training = was
    return total / n
