# misconception: mask_length
"""Misconception: padding_mask gives one flag per real index of the rank (range(rank, n, world_size)), forgetting
the padded positions: the mask is shorter than the shard on the ranks that get padding."""


def padding_mask(n, world_size, rank):
    return [False for _ in range(rank, n, world_size)]
