"""Correct: rank 0 writes to a temporary file and renames it into place
(atomic), then every rank meets at the barrier."""
import os

import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        tmp = f"{path}.tmp"
        torch.save({"weights": model.state_dict(), "opt": optimizer.state_dict(), "epoch": epoch}, tmp)
        os.replace(tmp, path)
    dist.barrier()


def resume(path, model, optimizer):
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["weights"])
    optimizer.load_state_dict(state["opt"])
    return int(state["epoch"])
