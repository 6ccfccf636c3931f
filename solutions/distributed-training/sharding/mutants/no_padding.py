# misconception: no_padding, mask_length
"""Misconception: the indices are dealt out with no padding, so ranks may get
different numbers of examples."""
import torch


def shard_indices(n, world_size, rank, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    return torch.randperm(n, generator=g).tolist()[rank::world_size]
