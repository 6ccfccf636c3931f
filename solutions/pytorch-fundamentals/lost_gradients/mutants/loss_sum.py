# misconception: sum_reduction
"""Misconception: sums the per-example cross-entropy instead of averaging it."""

import torch.nn.functional as F


def training_loss(logits, target):
    return F.cross_entropy(logits, target, reduction="sum")
