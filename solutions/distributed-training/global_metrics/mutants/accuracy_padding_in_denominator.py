# misconception: padding_in_denominator
"""Misconception: masking the correct predictions is enough; the count still
includes the padding duplicates."""
import torch
import torch.distributed as dist


def global_accuracy(logits, target, valid):
    correct = ((logits.argmax(1) == target) & valid).sum()
    t = torch.tensor([float(correct), float(target.numel())], dtype=torch.float64)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()
