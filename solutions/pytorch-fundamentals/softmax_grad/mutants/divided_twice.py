# misconception: divided_twice
"""Averages twice: divides softmax - onehot by n, then takes the mean over the batch of the
already averaged rows again (dividing by n once more)."""

import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    if logits.dim() == 1:
        return torch.softmax(logits, dim=0) - F.one_hot(target, logits.shape[0]).to(logits.dtype)
    n = logits.shape[0]
    per_example = (torch.softmax(logits, dim=1) - F.one_hot(target, logits.shape[1]).to(logits.dtype)) / n
    return per_example / n
