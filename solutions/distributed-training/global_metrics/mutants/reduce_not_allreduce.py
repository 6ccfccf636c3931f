# misconception: reduce_not_allreduce
"""Misconception: dist.reduce gives every rank the sum (it gives it to dst only)."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    t = torch.tensor([numerator, denominator], dtype=torch.float64)
    dist.reduce(t, dst=0)
    return (t[0] / t[1]).item()
