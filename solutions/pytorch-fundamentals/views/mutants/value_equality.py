# misconception: value_equality
"""Treats equal values as shared memory: a clone has the same values but its own storage."""

import torch


def shares_storage(a, b):
    return a.shape == b.shape and bool(torch.equal(a, b))
