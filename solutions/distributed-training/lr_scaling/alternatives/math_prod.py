"""Correct: math.prod for the batch, the effective batch reused for the rate."""
import math


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return math.prod((per_rank_batch, world_size, accum_steps))


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    return base_lr * effective_batch(per_rank_batch, world_size) / base_batch
