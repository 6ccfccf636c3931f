import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    """Global rank 0 writes the checkpoint; no rank returns before it is complete."""
    raise NotImplementedError


def resume(path, model, optimizer):
    """Every rank loads the checkpoint; returns the saved epoch."""
    raise NotImplementedError
