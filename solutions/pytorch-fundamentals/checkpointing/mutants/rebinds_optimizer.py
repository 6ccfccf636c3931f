# misconception: optimizer_not_loaded
"""Misconception: load_checkpoint builds a new optimizer and loads the saved state into it; the name is rebound
inside the function only, so the caller's optimizer never gets the state (the file itself is complete)."""
import torch


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer = type(optimizer)(model.parameters())  # a new object: the caller keeps the old one
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["torch_rng"])
    return ckpt["epoch"]
