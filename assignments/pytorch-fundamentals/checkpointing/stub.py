import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Write everything needed to resume training exactly after `epoch`."""
    raise NotImplementedError


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore a checkpoint into freshly built objects; return the saved epoch."""
    raise NotImplementedError


def epoch_loss(model, loader, loss_fn):
    """Mean per-sample loss over the loader, as a Python float."""
    raise NotImplementedError
