"""Correct: a fresh DataLoader each epoch over a TensorDataset, the sampler's
epoch set before iterating."""
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def epoch_orders(n, world_size, rank, epochs, seed):
    data = TensorDataset(torch.arange(n))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    orders = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        order = []
        for (xb,) in DataLoader(data, batch_size=1, sampler=sampler):
            order.append(xb.item())
        orders.append(order)
    return orders


def shard_indices(n, world_size, rank, epoch, seed):
    return epoch_orders(n, world_size, rank, epoch + 1, seed)[epoch]


def padding_mask(n, world_size, rank):
    n_per_rank = len(DistributedSampler(range(n), num_replicas=world_size, rank=rank))
    return [n_per_rank * world_size - n > 0 and j == n_per_rank - 1 and rank >= n % world_size
            for j in range(n_per_rank)]
