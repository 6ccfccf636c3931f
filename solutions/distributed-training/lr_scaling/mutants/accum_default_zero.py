# misconception: none
"""Misconception: accum_steps is always given, so it needs no default."""


def effective_batch(per_rank_batch, world_size, accum_steps):
    return per_rank_batch * world_size * accum_steps
