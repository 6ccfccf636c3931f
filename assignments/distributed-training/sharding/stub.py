import torch
from torch.utils.data import DataLoader, DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    """The indices DistributedSampler gives `rank` in `epoch`."""
    raise NotImplementedError


def padding_mask(n, world_size, rank):
    """For each position of this rank's shard: is it a padding duplicate?"""
    raise NotImplementedError


def epoch_orders(n, world_size, rank, epochs, seed):
    """The indices this rank visits in each epoch of a correct training loop."""
    raise NotImplementedError
