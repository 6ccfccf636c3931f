# misconception: no_reduce
"""Misconception: each rank returns the accuracy of its own valid examples (nothing is combined across ranks)."""
import torch


def global_accuracy(logits, target, valid):
    correct = ((logits.argmax(dim=1) == target) & valid).sum()
    return (correct.double() / valid.sum().clamp(min=1)).item()
