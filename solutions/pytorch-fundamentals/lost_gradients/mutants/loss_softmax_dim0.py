# misconception: softmax_wrong_dim
"""Normalises over the wrong dimension: log_softmax over the batch (dim=0) instead of over each
example's classes (dim=1), then picks the target entries."""

import torch.nn.functional as F


def training_loss(logits, target):
    return F.nll_loss(F.log_softmax(logits, dim=0), target)
