# misconception: none
"""Misconception: each rank shuffles with its own seed (seed + rank), so
shards overlap and some examples are never seen in an epoch."""
from torch.utils.data import DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed + rank)
    sampler.set_epoch(epoch)
    return list(sampler)
