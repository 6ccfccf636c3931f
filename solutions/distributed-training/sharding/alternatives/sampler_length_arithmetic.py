"""Correct: the sampler's own num_samples and total_size give the positions."""
from torch.utils.data import DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    s = DistributedSampler(range(n), num_replicas=world_size, rank=rank, seed=seed)
    s.set_epoch(epoch)
    return list(iter(s))


def padding_mask(n, world_size, rank):
    s = DistributedSampler(range(n), num_replicas=world_size, rank=rank)
    return [rank + j * world_size >= n for j in range(s.num_samples)]


def epoch_orders(n, world_size, rank, epochs, seed):
    orders = []
    for epoch in range(epochs):
        orders.append(shard_indices(n, world_size, rank, epoch, seed))
    return orders
