# misconception: no_barrier
"""Misconception: a barrier anywhere synchronises the ranks; here it is before
the save, so the others still return while rank 0 writes."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    dist.barrier()
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
