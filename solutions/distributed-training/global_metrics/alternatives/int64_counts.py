"""Correct: separate all_reduce calls; the accuracy's counts reduced as
int64 tensors (exact), the mean's sums as float64."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    num = torch.tensor(numerator, dtype=torch.float64)
    den = torch.tensor(denominator, dtype=torch.float64)
    dist.all_reduce(num)
    dist.all_reduce(den)
    return num.item() / den.item()


def global_accuracy(logits, target, valid):
    counts = torch.zeros(2, dtype=torch.int64)
    counts[0] = torch.where(valid, logits.argmax(dim=1) == target, False).sum()
    counts[1] = valid.sum()
    dist.all_reduce(counts)
    return counts[0].item() / counts[1].item()
