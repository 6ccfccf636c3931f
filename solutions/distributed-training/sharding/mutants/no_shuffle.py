# misconception: no_shuffle
"""Misconception: DistributedSampler only splits the data; it does not shuffle."""
import math


def shard_indices(n, world_size, rank, epoch, seed):
    total = math.ceil(n / world_size) * world_size
    return [i % n for i in range(total)][rank:total:world_size]
