# misconception: pads_from_tail
"""Misconception: the permutation is padded with its last indices (DistributedSampler repeats its first ones)."""
import math

import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    total = math.ceil(n / world_size) * world_size
    padded = perm + ((perm * total)[-(total - n):] if total > n else [])
    return padded[rank:total:world_size]
