# misconception: sqrt_rule
"""Misconception: the learning rate scales with the square root of the batch ratio."""
import math


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    return base_lr * math.sqrt(per_rank_batch * world_size / base_batch)
