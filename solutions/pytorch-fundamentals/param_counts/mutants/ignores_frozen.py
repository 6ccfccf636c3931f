"""Misconception: trainable_only is ignored, frozen parameters (requires_grad=False) are counted too."""
# misconception: counts_frozen

import torch
from torch import nn


def count_parameters(model, trainable_only=True):
    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
    # buffers are not parameters.
    return sum(p.numel() for p in model.parameters())
