"""Misconception: the formula is evaluated in NumPy int64 arithmetic, which silently wraps around
for widths whose product exceeds 2**63 - 1 (Python ints never overflow)."""
# misconception: int64_overflow
import numpy as np


def mlp_param_count(sizes):
    w = np.array(sizes, dtype=np.int64)
    return int((w[:-1] * w[1:] + w[1:]).sum())
