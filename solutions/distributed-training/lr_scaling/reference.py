def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return int(per_rank_batch * world_size * accum_steps)


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    return float(base_lr * per_rank_batch * world_size / base_batch)
