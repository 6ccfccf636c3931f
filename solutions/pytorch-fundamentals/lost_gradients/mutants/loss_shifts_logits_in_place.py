# misconception: modifies_input
"""Misconception: the logits are stabilised in place (logits -= max) before the loss: the value is right (the
shift cancels), but the caller's logits are changed."""
import torch
import torch.nn.functional as F


def training_loss(logits, target):
    with torch.no_grad():
        logits -= logits.max(dim=1, keepdim=True).values
    return F.cross_entropy(logits, target)
