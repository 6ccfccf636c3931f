"""Sandbox-side harness for global_metrics: every rank calls the student's
function on its own inputs; the judge computes the expected global values."""
import torch

from autograder.sandbox.conventions import observe
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


def observed_run(mod, name, per_rank_args, probe, timeout):
    """Each rank calls the student's ``name`` on its own arguments, observed (autograder.sandbox.conventions):
    what changed in its inputs and the global settings before and after, as plain values."""
    def body(rank, world_size):
        obs = observe(getattr(mod, name), probe, *per_rank_args[rank])
        return {"value": _plain(obs["value"]), "args": obs["args"],
                "seen": {k: obs[k] for k in ("changed", "settings_before", "settings_after")}}

    return run_ranks(len(per_rank_args), body, timeout=timeout)
