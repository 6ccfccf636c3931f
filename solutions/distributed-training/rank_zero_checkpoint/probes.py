"""Sandbox-side harness for rank_zero_checkpoint.

who_writes gives every rank its own path: the files that exist afterwards say
which ranks wrote. complete_on_return slows rank 0's model.state_dict() down
so that a rank which returns before the file is complete (no barrier, or a
barrier before the save) finds no file when it looks right after returning.
resume_run trains, saves, rebuilds every object with other weights, resumes
and trains on: the judge recomputes the uninterrupted run itself.
"""
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.sandbox.ranks import run_ranks


class SlowStateDict(nn.Sequential):
    """An MLP whose state_dict() takes `delay` seconds (set on rank 0 only)."""

    delay = 0.0

    def state_dict(self, *args, **kwargs):
        time.sleep(self.delay)
        return super().state_dict(*args, **kwargs)


def build(spec, weights):
    d, h, c = spec["sizes"]
    model = SlowStateDict(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(w)
    opt = torch.optim.SGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"])
    return model, opt


def train(model, opt, spec, steps):
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(spec["X"]), spec["Y"]).backward()
        opt.step()


def _folder():
    return tempfile.mkdtemp(prefix="ckpt-", dir=os.getcwd())


def who_writes(mod, spec, timeout):
    folder = _folder()

    def body(rank, world_size):
        model, opt = build(spec, spec["w0"])
        train(model, opt, spec, spec["before"])
        mod.save_on_rank_zero(os.path.join(folder, f"ckpt-rank{rank}.pt"), model, opt, spec["epoch"])
        return None

    report = run_ranks(spec["world_size"], body, timeout=timeout)
    report["files"] = sorted(os.listdir(folder))
    return report


def _loads(path):
    try:
        torch.load(path, weights_only=True)
        return True, ""
    except Exception as e:  # noqa: BLE001 - reported to the judge
        return False, f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"


def complete_on_return(mod, spec, timeout):
    path = os.path.join(_folder(), "ckpt.pt")

    def body(rank, world_size):
        model, opt = build(spec, spec["w0"])
        train(model, opt, spec, spec["before"])
        model.delay = spec["delay"] if rank == 0 else 0.0
        mod.save_on_rank_zero(path, model, opt, spec["epoch"])
        exists = os.path.isfile(path)
        loads, _ = _loads(path) if exists else (False, "")
        return {"exists": exists, "loads": loads}

    report = run_ranks(spec["world_size"], body, timeout=timeout)
    report["file"] = os.path.isfile(path)
    report["weights_only"] = _loads(path) if report["file"] else (False, "no file")
    return report


def resume_run(mod, spec, timeout):
    path = os.path.join(_folder(), "ckpt.pt")

    def body(rank, world_size):
        model, opt = build(spec, spec["w0"])
        train(model, opt, spec, spec["before"])
        mod.save_on_rank_zero(path, model, opt, spec["epoch"])
        del model, opt
        model, opt = build(spec, spec["w_other"])  # a restarted job: every object rebuilt
        epoch = mod.resume(path, model, opt)
        train(model, opt, spec, spec["after"])
        kind = type(epoch).__name__
        if isinstance(epoch, torch.Tensor):
            epoch = epoch.detach().clone()
        elif not isinstance(epoch, (int, float, type(None))):
            epoch = None
        return {"epoch": epoch, "epoch_type": kind, "params": [p.detach().clone() for p in model.parameters()]}

    return run_ranks(spec["world_size"], body, timeout=timeout)
