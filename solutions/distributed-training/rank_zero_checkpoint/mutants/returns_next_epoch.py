# misconception: epoch_off_by_one
"""Misconception: resume returns the epoch to start from, one past the saved one."""
import torch


def resume(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return int(ckpt["epoch"]) + 1
