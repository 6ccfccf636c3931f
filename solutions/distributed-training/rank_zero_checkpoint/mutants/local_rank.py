# misconception: local_rank
"""Misconception: LOCAL_RANK 0 is rank zero; on a cluster every node has one."""
import os

import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if int(os.environ["LOCAL_RANK"]) == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
    dist.barrier()
