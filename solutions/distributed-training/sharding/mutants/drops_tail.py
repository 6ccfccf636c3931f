# misconception: drops_tail
"""Misconception: the tail that does not fill a round is dropped (drop_last=True's behaviour), not padded."""
import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    kept = perm[: (n // world_size) * world_size]
    return kept[rank::world_size]
