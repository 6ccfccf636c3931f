# misconception: none
"""Unstable softmax: exp(logits) / sum exp(logits) without subtracting the max overflows to
inf (then nan) for logits around +1e4."""
import torch


def softmax_ce_grad(logits, target):
    if logits.dim() == 1:
        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
    n = logits.shape[0]
    e = torch.exp(logits)
    grad = e / e.sum(dim=1, keepdim=True)
    grad[torch.arange(n), target] -= 1
    return grad / n
