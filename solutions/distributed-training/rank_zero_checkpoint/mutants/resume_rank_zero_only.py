# misconception: ranks_differ
"""Misconception: only rank 0 needs to read the checkpoint, as only it wrote it."""
import torch
import torch.distributed as dist


def resume(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    if dist.get_rank() == 0:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
    return int(ckpt["epoch"])
