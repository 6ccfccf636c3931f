# misconception: pad_every_rank
"""Misconception: when the split is uneven, every rank's last index is a
padding duplicate."""
import math


def padding_mask(n, world_size, rank):
    per = math.ceil(n / world_size)
    uneven = n % world_size != 0
    return [uneven and j == per - 1 for j in range(per)]
