# misconception: pad_with_last
"""Misconception: the permutation is padded by repeating its last index."""
import math

import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    total = math.ceil(n / world_size) * world_size
    padded = perm + [perm[-1]] * (total - n)
    return padded[rank:total:world_size]
