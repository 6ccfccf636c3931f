# misconception: set_epoch_late
"""Misconception: set_epoch is called at the end of each epoch's loop, so
every epoch uses the previous epoch's order."""
from torch.utils.data import DataLoader, DistributedSampler


def epoch_orders(n, world_size, rank, epochs, seed):
    dataset = list(range(n))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    orders = []
    for epoch in range(epochs):
        orders.append([int(b[0]) for b in loader])
        sampler.set_epoch(epoch)
    return orders
