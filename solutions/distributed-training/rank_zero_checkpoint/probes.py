"""Sandbox-side harness for rank_zero_checkpoint.

who_writes gives every rank its own path: the files that exist afterwards say
which ranks wrote. complete_on_return holds rank 0 back at its first
model.state_dict() or optimizer.state_dict() (before it can write anything)
until every other rank has returned from save_on_rank_zero and looked at the
path, or has spent `wait` seconds inside the call without returning (waiting
in a barrier for rank 0, as it should): a rank which returns before the file
is complete (no barrier, or a barrier before the save) then ALWAYS finds no
file, however the machine schedules the ranks, and a correct save always
passes. resume_run trains, saves, rebuilds every object with other weights,
resumes and trains on; the other ranks call resume only once rank 0's save
has returned, so resume is judged on a complete file whether or not the save
had its barrier (that is the other test's verdict, not a race here). The
judge recomputes the uninterrupted run itself.

Which files exist afterwards, and the final file's bytes, are never read here:
the probes return the folder's name, and the judge lists and reads it itself
from outside the sandbox (`sandbox.scratch_files`, through a descriptor of the
scratch folder sent before any student code ran). No torch.load runs here at
all (the judge has the bytes decoded in a sandbox that never ran student code).
Only what a rank saw right after returning is read inside (that fact exists
only in the ranks: its test is advice, in_process and 0 points), with the functions captured when
the probes load, as a digest the judge compares with the final file's.
"""
import builtins
import hashlib
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.sandbox.conventions import observe
from autograder.sandbox.ranks import Signals, run_ranks

# captured before any student cell runs: rebinding os.path.isfile or open later changes nothing here
_ISFILE = os.path.isfile
_MKDTEMP = tempfile.mkdtemp
_SCRATCH = os.getcwd()  # the sandbox's scratch folder, the one the judge reads
_OPEN = builtins.open
_MAX_BYTES = 64 << 20  # far more than the exercise's checkpoint needs


class _Gated:
    """state_dict() runs `gate` first, once (set on rank 0 only): rank 0 is held before it can write."""

    gate = None

    def state_dict(self, *args, **kwargs):
        gate, self.gate = self.gate, None
        if gate is not None:
            gate()
        return super().state_dict(*args, **kwargs)


class GatedMLP(_Gated, nn.Sequential):
    pass


class GatedSGD(_Gated, torch.optim.SGD):
    pass


def build(spec, weights):
    d, h, c = spec["sizes"]
    model = GatedMLP(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(w)
    opt = GatedSGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"])
    return model, opt


def train(model, opt, spec, steps):
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(spec["X"]), spec["Y"]).backward()
        opt.step()


def _folder():
    return _MKDTEMP(prefix="ckpt-", dir=_SCRATCH)


def who_writes(mod, spec, timeout):
    folder = _folder()

    def body(rank, world_size):
        model, opt = build(spec, spec["w0"])
        train(model, opt, spec, spec["before"])
        if spec.get("probe") is None:
            mod.save_on_rank_zero(os.path.join(folder, f"ckpt-rank{rank}.pt"), model, opt, spec["epoch"])
            return None
        obs = observe(mod.save_on_rank_zero, spec["probe"], os.path.join(folder, f"ckpt-rank{rank}.pt"), model, opt,
                      spec["epoch"], _names=["path", "model", "optimizer", "epoch"])
        return {"seen": {k: obs[k] for k in ("changed", "settings_before", "settings_after")}}

    report = run_ranks(spec["world_size"], body, timeout=timeout)
    report["folder"] = os.path.basename(folder)  # listed by the judge, from outside the sandbox
    return report


def _read(path):
    """The file's bytes (None when there is no file), read with the functions captured at load time."""
    if not _ISFILE(path):
        return None
    with _OPEN(path, "rb") as f:
        return f.read(_MAX_BYTES + 1)


def _digest(data):
    return None if data is None else hashlib.sha256(data).hexdigest()


def _hold_rank_zero(signals, world_size, wait, timeout):
    """Rank 0's gate: until every other rank entered the save, then until each has looked (or `wait` s passed)."""
    others = range(1, world_size)

    def gate():
        signals.wait([f"entered{r}" for r in others], timeout)  # no collective before this: every rank gets here
        signals.wait([f"looked{r}" for r in others], wait)  # a rank still inside the call is blocked: fine

    return gate


def complete_on_return(mod, spec, timeout):
    folder = _folder()
    path = os.path.join(folder, "ckpt.pt")

    with Signals() as signals:
        def body(rank, world_size):
            model, opt = build(spec, spec["w0"])
            train(model, opt, spec, spec["before"])
            if rank == 0 and spec["wait"]:
                gate = _hold_rank_zero(signals, world_size, spec["wait"], timeout)

                def once():
                    model.gate = opt.gate = None
                    gate()

                model.gate = opt.gate = once
            signals.set(f"entered{rank}")
            mod.save_on_rank_zero(path, model, opt, spec["epoch"])
            seen = _read(path)
            signals.set(f"looked{rank}")
            return {"exists": seen is not None, "digest": _digest(seen)}

        report = run_ranks(spec["world_size"], body, timeout=timeout)
    report["folder"] = os.path.basename(folder)  # the final file is read by the judge, from outside the sandbox
    return report


def resume_run(mod, spec, timeout):
    path = os.path.join(_folder(), "ckpt.pt")

    with Signals() as signals:
        def body(rank, world_size):
            model, opt = build(spec, spec["w0"])
            train(model, opt, spec, spec["before"])
            mod.save_on_rank_zero(path, model, opt, spec["epoch"])
            if rank == 0:
                signals.set("saved")
            else:  # bounded: a rank 0 that never returns (a barrier only it calls) is still named by the judge
                signals.wait(["saved"], timeout / 2)
            del model, opt
            model, opt = build(spec, spec["w_other"])  # a restarted job: every object rebuilt
            epoch = mod.resume(path, model, opt)
            train(model, opt, spec, spec["after"])
            # the value crosses as itself (the judge checks `type(epoch) is int`); anything else as a description
            if type(epoch) is torch.Tensor:
                epoch = epoch.detach().clone()
            elif type(epoch) not in (int, float, bool, type(None)):
                epoch = "<" + type(epoch).__name__ + ">"
            return {"epoch": epoch, "params": [p.detach().clone() for p in model.parameters()]}

        return run_ranks(spec["world_size"], body, timeout=timeout)
