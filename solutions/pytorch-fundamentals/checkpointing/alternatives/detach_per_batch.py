"""Correct: a nested checkpoint written through a temporary file and an
atomic rename; epoch_loss with autograd on but each batch's loss detached
immediately (per-sample sum via weighting, kept as Python floats)."""
import os

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    payload = {
        "meta": {"epoch": epoch},
        "states": {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                   "scheduler": scheduler.state_dict()},
        "rng": {"cpu": torch.get_rng_state()},
    }
    tmp = str(path) + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(payload, f)
    os.replace(tmp, path)


def load_checkpoint(path, model, optimizer, scheduler):
    with open(path, "rb") as f:
        payload = torch.load(f, weights_only=True)
    states = payload["states"]
    model.load_state_dict(states["model"])
    optimizer.load_state_dict(states["optimizer"])
    scheduler.load_state_dict(states["scheduler"])
    torch.set_rng_state(payload["rng"]["cpu"])
    return payload["meta"]["epoch"]


def epoch_loss(model, loader, loss_fn):
    sums, sizes = [], []
    for x, y in loader:
        loss = loss_fn(model(x), y).detach()
        sums.append(float(loss) * len(y))
        sizes.append(len(y))
    return sum(sums) / sum(sizes)
