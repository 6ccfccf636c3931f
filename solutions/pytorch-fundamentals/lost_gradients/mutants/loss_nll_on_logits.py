# misconception: nll_on_logits
"""Misconception: F.nll_loss on raw logits, forgetting the log_softmax it expects."""

import torch.nn.functional as F


def training_loss(logits, target):
    return F.nll_loss(logits, target)
