"""Correct: positions computed with NumPy, converted back to Python types."""
import numpy as np
import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator().manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).numpy()
    per_rank = int(np.ceil(n / world_size))
    padded = np.resize(perm, per_rank * world_size)  # np.resize repeats the array cyclically
    return [int(i) for i in padded[rank::world_size]]


def padding_mask(n, world_size, rank):
    per_rank = int(np.ceil(n / world_size))
    positions = rank + world_size * np.arange(per_rank)
    return [bool(p) for p in positions >= n]


def epoch_orders(n, world_size, rank, epochs, seed):
    return [shard_indices(n, world_size, rank, epoch, seed) for epoch in range(epochs)]
