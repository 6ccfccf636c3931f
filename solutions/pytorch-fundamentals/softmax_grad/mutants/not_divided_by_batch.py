# misconception: none
"""Forgets that the mean reduction averages over the batch: the gradient is n times too
large (softmax - onehot, not divided by n)."""
import torch


def softmax_ce_grad(logits, target):
    grad = torch.softmax(logits, dim=-1)
    if logits.dim() == 1:
        grad[target] -= 1
    else:
        grad[torch.arange(logits.shape[0]), target] -= 1
    return grad
