"""Correct: reduce to rank 0, then broadcast the sums back to every rank."""
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    t = torch.tensor([numerator, denominator], dtype=torch.float64)
    dist.reduce(t, dst=0)
    dist.broadcast(t, src=0)
    return t[0].item() / t[1].item()


def global_accuracy(logits, target, valid):
    pred = logits.argmax(dim=1)
    t = torch.stack([(pred.eq(target) & valid).sum(), valid.sum()]).to(torch.float64)
    dist.reduce(t, dst=0)
    dist.broadcast(t, src=0)
    return t[0].item() / t[1].item()
