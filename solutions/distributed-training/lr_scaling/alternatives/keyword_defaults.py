"""Correct: keyword-only internals, int() and float() conversions."""


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return int(per_rank_batch) * int(world_size) * int(accum_steps)


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    new_batch = effective_batch(per_rank_batch, world_size, accum_steps=1)
    return float(base_lr * new_batch / base_batch)
