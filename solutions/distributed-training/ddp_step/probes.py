"""Sandbox-side harness for ddp_step: every rank builds the same float64 MLP
from the judge's weights (and, when asked, fills .grad with stale values),
calls the student's ddp_step on its own shard, and reports its parameters,
gradients and returned loss. The judge computes every expected value."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.sandbox.conventions import observe
from autograder.sandbox.ranks import run_ranks


def build(spec):
    d, h, c = spec["sizes"]
    model = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), spec["weights"]):
            p.copy_(w)
    return model


def ddp_run(mod, spec, timeout):
    shards = spec["shards"]

    def body(rank, world_size):
        model = build(spec)
        if spec.get("stale") is not None:
            for p, g in zip(model.parameters(), spec["stale"]):
                p.grad = g.clone()
        opt = torch.optim.SGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"])
        loss_fn = F.mse_loss if spec["loss"] == "mse" else F.cross_entropy
        x, y = shards[rank]
        obs = observe(mod.ddp_step, spec["probe"], rank, world_size, model, (x.clone(), y.clone()), opt, loss_fn,
                      _names=["rank", "world_size", "model", "batch", "optimizer", "loss_fn"],
                      _may_change=["model", "optimizer"]) if spec.get("probe") is not None else None
        value = obs["value"] if obs is not None else mod.ddp_step(rank, world_size, model, (x.clone(), y.clone()),
                                                                  opt, loss_fn)
        # the value crosses as itself (the judge checks its type); anything else as a short description
        if type(value) is torch.Tensor:
            value = value.detach().clone()
        elif type(value) not in (int, float, bool, type(None)):
            value = "<" + type(value).__name__ + ">"
        return {"loss": value,
                "params": [p.detach().clone() for p in model.parameters()],
                "grads": [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()],
                "seen": None if obs is None else {k: obs[k] for k in ("changed", "settings_before", "settings_after")}}

    return run_ranks(len(shards), body, timeout=timeout, group_check=spec.get("group_check"))
