# misconception: contiguous_chunks
"""Misconception: each rank gets a contiguous block of the shuffled indices."""
import math

import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    per = math.ceil(n / world_size)
    padded = [perm[i % n] for i in range(per * world_size)]
    return padded[rank * per:(rank + 1) * per]
