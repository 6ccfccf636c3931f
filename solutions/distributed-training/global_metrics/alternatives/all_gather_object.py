"""Correct: Python numbers exchanged with all_gather_object; exact integer
counts for the accuracy."""
import torch.distributed as dist


def global_mean(numerator, denominator):
    pairs = [None] * dist.get_world_size()
    dist.all_gather_object(pairs, (numerator, denominator))
    return sum(n for n, _ in pairs) / sum(d for _, d in pairs)


def global_accuracy(logits, target, valid):
    correct = int((logits.argmax(dim=1)[valid] == target[valid]).sum())
    counts = [None] * dist.get_world_size()
    dist.all_gather_object(counts, (correct, int(valid.sum())))
    return float(sum(c for c, _ in counts) / sum(v for _, v in counts))
