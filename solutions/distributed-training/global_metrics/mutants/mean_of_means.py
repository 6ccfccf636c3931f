# misconception: mean_of_means
"""Misconception: the global mean is the average of the ranks' means."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    t = torch.tensor([numerator / denominator], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()
