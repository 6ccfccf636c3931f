# misconception: global_max
"""Stabilises softmax by subtracting the largest logit of the whole batch instead of each row's
own maximum: a row whose logits all lie far below the batch's maximum underflows to 0/0."""

import torch


def softmax_ce_grad(logits, target):
    z = logits.reshape(-1, logits.shape[-1])
    e = torch.exp(z - z.max())
    p = e / e.sum(dim=1, keepdim=True)
    p[torch.arange(z.shape[0]), target.reshape(-1)] -= 1
    return (p / z.shape[0]).reshape(logits.shape)
