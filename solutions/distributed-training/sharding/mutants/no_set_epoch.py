# misconception: no_set_epoch
"""Misconception: the sampler reshuffles by itself every epoch; set_epoch is
never called."""
from torch.utils.data import DataLoader, DistributedSampler


def epoch_orders(n, world_size, rank, epochs, seed):
    dataset = list(range(n))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    return [[int(b[0]) for b in loader] for _ in range(epochs)]
