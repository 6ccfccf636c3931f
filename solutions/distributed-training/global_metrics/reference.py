import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    totals = torch.tensor([float(numerator), float(denominator)], dtype=torch.float64)
    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
    return (totals[0] / totals[1]).item()


def global_accuracy(logits, target, valid):
    correct = ((logits.argmax(dim=1) == target) & valid).sum()
    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
    dist.all_reduce(counts)
    return (counts[0] / counts[1]).item()
