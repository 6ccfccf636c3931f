"""Correct: the ratio computed exactly with fractions, converted at the end."""
from fractions import Fraction


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return per_rank_batch * world_size * accum_steps


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    return float(base_lr * Fraction(per_rank_batch * world_size, base_batch))
