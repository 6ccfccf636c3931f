# misconception: types
"""Misconception: a tensor of indices is as good as a list of ints."""
import math

import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g)
    total = math.ceil(n / world_size) * world_size
    return perm[torch.arange(total) % n][rank:total:world_size]
