# misconception: ignores_epoch
"""Misconception: the shuffle depends on the seed only, not on the epoch."""
from torch.utils.data import DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    return list(sampler)
