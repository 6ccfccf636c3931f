# misconception: one_hot_num_classes
"""Builds the one-hot target with F.one_hot(target) without num_classes: it has only
max(target) + 1 columns, so it no longer lines up with the C logits when the batch's targets
never reach the last class."""

import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    probs = torch.softmax(logits, dim=-1)
    onehot = F.one_hot(target).to(logits.dtype)
    n = logits.shape[0] if logits.dim() == 2 else 1
    return (probs - onehot) / n
