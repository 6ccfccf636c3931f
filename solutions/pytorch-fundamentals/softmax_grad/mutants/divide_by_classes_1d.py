# misconception: none
"""Divides by logits.shape[0] whatever the shape: for unbatched (C,) logits that divides by
the number of classes C instead of 1."""
import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    probs = torch.softmax(logits, dim=-1)
    onehot = F.one_hot(target, logits.shape[-1]).to(logits.dtype)
    return (probs - onehot) / logits.shape[0]
