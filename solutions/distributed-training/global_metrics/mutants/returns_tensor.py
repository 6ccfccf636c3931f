# misconception: types
"""Misconception: returning the one-element tensor is as good as a float."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    t = torch.tensor([numerator, denominator], dtype=torch.float64)
    dist.all_reduce(t)
    return t[0] / t[1]
