def effective_batch(per_rank_batch, world_size, accum_steps=1):
    """Examples per optimizer step."""
    raise NotImplementedError


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    """The linear scaling rule."""
    raise NotImplementedError
