# misconception: ignores_accum
"""Misconception: gradient accumulation does not change the effective batch."""


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return per_rank_batch * world_size
