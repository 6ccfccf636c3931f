# misconception: softmax_twice
"""Misconception: applies softmax before F.cross_entropy, which already applies log_softmax
(probabilities are treated as logits)."""

import torch
import torch.nn.functional as F


def training_loss(logits, target):
    return F.cross_entropy(torch.softmax(logits, dim=1), target)
