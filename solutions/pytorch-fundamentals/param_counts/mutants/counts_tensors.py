"""Misconception: counts parameter tensors (len(list(model.parameters()))) instead of the
scalars they hold (numel)."""
# misconception: counts_tensors

import torch
from torch import nn


def count_parameters(model, trainable_only=True):
    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
    # buffers are not parameters.
    return len([p for p in model.parameters() if p.requires_grad or not trainable_only])
