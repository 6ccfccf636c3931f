"""Sandbox-side harness for global_metrics: every rank calls the student's
function on its own inputs; the judge computes the expected global values."""
import torch

from autograder.sandbox.ranks import run_ranks


def _plain(value):
    kind = type(value).__name__
    if isinstance(value, torch.Tensor):
        value = value.detach().double().reshape(-1)[0].item() if value.numel() == 1 else None
    elif isinstance(value, (int, float)):
        value = float(value)
    else:
        value = None
    return {"type": kind, "value": value}


def mean_run(mod, numerators, denominators, timeout):
    def body(rank, world_size):
        return _plain(mod.global_mean(numerators[rank], denominators[rank]))

    return run_ranks(len(numerators), body, timeout=timeout)


def accuracy_run(mod, shards, timeout):
    def body(rank, world_size):
        logits, target, valid = shards[rank]
        return _plain(mod.global_accuracy(logits.clone(), target.clone(), valid.clone()))

    return run_ranks(len(shards), body, timeout=timeout)
