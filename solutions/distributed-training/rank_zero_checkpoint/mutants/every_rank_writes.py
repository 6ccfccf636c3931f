# misconception: every_rank_writes
"""Misconception: every rank holds the same model, so every rank may as well
write it."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
    dist.barrier()
