# misconception: divide_by_world
"""Misconception: after summing the numerators, divide by the number of ranks."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    t = torch.tensor([numerator], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()
