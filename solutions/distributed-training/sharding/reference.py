import math

import torch
from torch.utils.data import DataLoader, DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
                                 drop_last=False)
    sampler.set_epoch(epoch)
    return [int(i) for i in sampler]


def padding_mask(n, world_size, rank):
    per_rank = math.ceil(n / world_size)
    # position j of rank r is position r + j * world_size of the padded permutation
    return [rank + j * world_size >= n for j in range(per_rank)]


def epoch_orders(n, world_size, rank, epochs, seed):
    dataset = list(range(n))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    orders = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        orders.append([int(batch[0]) for batch in loader])
    return orders
