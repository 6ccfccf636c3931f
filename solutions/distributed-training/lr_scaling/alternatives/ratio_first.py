"""Correct: the scale factor first, then the rate (floats throughout)."""


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    total = 0
    for _ in range(world_size * accum_steps):
        total += per_rank_batch
    return total


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    factor = (per_rank_batch * world_size) / base_batch
    return float(base_lr) * factor
