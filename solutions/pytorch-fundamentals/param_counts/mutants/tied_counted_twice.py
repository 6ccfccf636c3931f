"""Misconception: sums every module's own parameters, so a parameter shared by two modules (tied
weights) is counted twice."""
# misconception: tied_twice

import torch
from torch import nn


def count_parameters(model, trainable_only=True):
    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
    # buffers are not parameters.
    total = 0
    for _, module in model.named_modules():
        for p in module.parameters(recurse=False):
            if p.requires_grad or not trainable_only:
                total += p.numel()
    return total
