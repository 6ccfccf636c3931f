"""Sandbox-side harness for global_metrics: every rank calls the student's
function on its own inputs; the judge computes the expected global values."""
import torch

from autograder.sandbox.ranks import run_ranks


def _plain(value):
    """The value as itself (the judge checks `type(v) is float`); anything else as a short description."""
    if type(value) is torch.Tensor:
        return value.detach().clone()
    if type(value) in (int, float, bool, type(None)):
        return value
    return "<" + type(value).__name__ + ">"


def mean_run(mod, numerators, denominators, timeout):
    def body(rank, world_size):
        return _plain(mod.global_mean(numerators[rank], denominators[rank]))

    return run_ranks(len(numerators), body, timeout=timeout)


def accuracy_run(mod, shards, timeout):
    def body(rank, world_size):
        logits, target, valid = shards[rank]
        return _plain(mod.global_accuracy(logits.clone(), target.clone(), valid.clone()))

    return run_ranks(len(shards), body, timeout=timeout)
