# misconception: none
"""Casts to float32 (.float()) to be safe: float64 inputs come back as float32 and lose
precision."""
import torch


def softmax_ce_grad(logits, target):
    z = logits.float()
    if z.dim() == 1:
        z = z.unsqueeze(0)
        target = target.reshape(1)
    n = z.shape[0]
    grad = torch.softmax(z, dim=1)
    grad[torch.arange(n), target] -= 1
    return (grad / n).reshape(logits.shape)
