# misconception: none
"""Stabilises by subtracting the max in place (logits -= max, then exp_): the gradient is
right but the caller's logits are destroyed."""
import torch


def softmax_ce_grad(logits, target):
    logits -= logits.max(dim=-1, keepdim=True).values
    logits.exp_()
    logits /= logits.sum(dim=-1, keepdim=True)
    if logits.dim() == 1:
        logits[target] -= 1
        return logits
    n = logits.shape[0]
    logits[torch.arange(n), target] -= 1
    logits /= n
    return logits
