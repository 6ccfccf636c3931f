# misconception: epochs_from_one
"""Misconception: epochs are counted from 1 when calling set_epoch."""
from torch.utils.data import DataLoader, DistributedSampler


def epoch_orders(n, world_size, rank, epochs, seed):
    dataset = list(range(n))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    orders = []
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)
        orders.append([int(b[0]) for b in loader])
    return orders
