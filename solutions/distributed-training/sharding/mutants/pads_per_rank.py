# misconception: pads_per_rank
"""Misconception: each rank takes every world_size-th index and pads its own shard to ceil(n / world_size) with
its own first indices (DistributedSampler pads the whole permutation once, so only the last ranks get padding)."""
import math

import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    per = math.ceil(n / world_size)
    mine = perm[rank::world_size]
    if not mine:
        return perm[:per]
    return mine + (mine * per)[: per - len(mine)]
