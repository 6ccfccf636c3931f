"""Misconception: the checkpoint has weights, optimizer and scheduler but not
the random generator state, so dropout masks and shuffling differ after a
resume."""
# misconception: no_rng_state

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": int(epoch),
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    return ckpt["epoch"]
