# misconception: none
"""Upcasts to float64 for accuracy and forgets to cast back: float32 logits give a float64
gradient (the dtype must be kept)."""
import torch


def softmax_ce_grad(logits, target):
    z = logits.to(torch.float64)
    p = torch.softmax(z, dim=-1)
    if z.dim() == 1:
        p[target] -= 1
        return p
    p[torch.arange(z.shape[0]), target] -= 1
    return p / z.shape[0]
