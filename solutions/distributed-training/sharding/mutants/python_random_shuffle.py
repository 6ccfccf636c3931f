# misconception: python_shuffle
"""Misconception: the shuffle uses Python's random module seeded with seed + epoch (DistributedSampler uses a
torch.Generator and torch.randperm)."""
import math
import random


def shard_indices(n, world_size, rank, epoch, seed):
    idx = list(range(n))
    random.Random(seed + epoch).shuffle(idx)
    total = math.ceil(n / world_size) * world_size
    padded = idx + (idx * math.ceil((total - n) / n))[: total - n] if total > n else idx
    return padded[rank:total:world_size]
