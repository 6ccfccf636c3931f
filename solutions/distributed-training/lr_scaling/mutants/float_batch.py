# misconception: types
"""Misconception: a batch size computed with / is fine as a float."""


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return per_rank_batch * world_size * accum_steps / 1
