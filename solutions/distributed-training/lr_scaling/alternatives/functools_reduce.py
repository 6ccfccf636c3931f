"""Correct: functools.reduce over the factors."""
import functools
import operator


def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return functools.reduce(operator.mul, [per_rank_batch, world_size, accum_steps], 1)


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    return functools.reduce(operator.mul, [base_lr, per_rank_batch, world_size], 1.0) / base_batch
