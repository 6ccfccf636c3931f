# misconception: pad_first_ranks
"""Misconception: the padding duplicates go to the first ranks."""
import math


def padding_mask(n, world_size, rank):
    per = math.ceil(n / world_size)
    pad = per * world_size - n
    return [j == per - 1 and rank < pad for j in range(per)]
