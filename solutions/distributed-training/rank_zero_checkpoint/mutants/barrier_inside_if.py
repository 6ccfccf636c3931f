# misconception: none
"""Misconception: only the writer needs to wait; the barrier inside `if rank
== 0` is a collective the other ranks never join, so rank 0 waits forever."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
        dist.barrier()
