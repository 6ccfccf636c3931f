# misconception: float32
"""Misconception: torch.tensor of Python floats is precise enough for sums
(it is float32 by default)."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    t = torch.tensor([numerator, denominator])
    dist.all_reduce(t)
    return (t[0] / t[1]).item()
