"""Correct: each rank contributes its mean weighted by its count (a weighted
average of means is the global mean)."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    local_mean = numerator / denominator if denominator else 0.0
    t = torch.tensor([local_mean * denominator, float(denominator)], dtype=torch.float64)
    dist.all_reduce(t)
    return float(t[0] / t[1])


def global_accuracy(logits, target, valid):
    n_valid = int(valid.sum())
    acc = float((logits.argmax(1)[valid] == target[valid]).double().mean()) if n_valid else 0.0
    return global_mean(acc * n_valid, n_valid)
