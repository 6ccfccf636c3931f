"""Correct: DistributedSampler rewritten by hand (randperm seeded with
seed + epoch, padding by cycling the permutation, every world_size-th index)."""
import math

import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    total = math.ceil(n / world_size) * world_size
    padded = [perm[i % n] for i in range(total)]
    return padded[rank:total:world_size]


def padding_mask(n, world_size, rank):
    total = -(-n // world_size) * world_size
    return [pos >= n for pos in range(rank, total, world_size)]


def epoch_orders(n, world_size, rank, epochs, seed):
    return [shard_indices(n, world_size, rank, e, seed) for e in range(epochs)]
