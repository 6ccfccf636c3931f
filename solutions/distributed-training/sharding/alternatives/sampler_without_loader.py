"""Correct: iterate the sampler itself each epoch (a DataLoader over it
visits the same indices); the padding count goes to the last ranks."""
from torch.utils.data import DistributedSampler


def epoch_orders(n, world_size, rank, epochs, seed):
    sampler = DistributedSampler(list(range(n)), num_replicas=world_size, rank=rank, seed=seed)
    out = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        out.append(list(sampler))
    return out


def padding_mask(n, world_size, rank):
    per_rank = (n + world_size - 1) // world_size
    padding = per_rank * world_size - n
    mask = [False] * per_rank
    if rank >= world_size - padding:
        mask[-1] = True
    return mask


def shard_indices(n, world_size, rank, epoch, seed):
    return epoch_orders(n, world_size, rank, epoch + 1, seed)[-1]
