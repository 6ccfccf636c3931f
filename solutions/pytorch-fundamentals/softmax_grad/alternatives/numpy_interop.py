"""Computed in NumPy in the logits' own dtype (stable softmax with each row's max), then
brought back with torch.from_numpy."""

# torchgrader: whole-file
import numpy as np
import torch


def softmax_ce_grad(logits, target):
    z = logits.detach().cpu().numpy().reshape(-1, logits.shape[-1])
    t = target.detach().cpu().numpy().reshape(-1)
    n = z.shape[0]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    p[np.arange(n), t] -= z.dtype.type(1)
    p /= z.dtype.type(n)
    return torch.from_numpy(np.ascontiguousarray(p)).reshape(logits.shape)
