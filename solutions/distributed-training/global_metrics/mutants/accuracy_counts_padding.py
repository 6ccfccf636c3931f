# misconception: counts_padding
"""Misconception: the valid mask can be ignored; padding duplicates are just
more examples."""
import torch
import torch.distributed as dist


def global_accuracy(logits, target, valid):
    t = torch.tensor([float((logits.argmax(1) == target).sum()), float(len(target))], dtype=torch.float64)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()
