# misconception: ignores_world
"""Misconception: the batch size of a step is the per-rank batch."""


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return per_rank_batch * accum_steps
