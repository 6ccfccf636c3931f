# misconception: no_file
"""Misconception: rank 0 writes to a temporary name (path + ".tmp") to make the save atomic, and never renames
it to `path`: no file is at the path the caller gave."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)},
                   str(path) + ".tmp")
    dist.barrier()
