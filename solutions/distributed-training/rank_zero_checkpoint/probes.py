"""Sandbox-side harness for rank_zero_checkpoint.

who_writes gives every rank its own path: the files that exist afterwards say
which ranks wrote. complete_on_return slows rank 0's model.state_dict() down
so that a rank which returns before the file is complete (no barrier, or a
barrier before the save) finds no file when it looks right after returning.
resume_run trains, saves, rebuilds every object with other weights, resumes
and trains on: the judge recomputes the uninterrupted run itself.

Which files exist afterwards, and the final file's bytes, are never read here:
the probes return the folder's name, and the judge lists and reads it itself
from outside the sandbox (`sandbox.scratch_files`, through a descriptor of the
scratch folder sent before any student code ran). No torch.load runs here at
all (the judge has the bytes decoded in a sandbox that never ran student code).
Only what a rank saw right after returning is read inside (that fact exists
only in the ranks: its test is in_process), with the functions captured when
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

from autograder.sandbox.ranks import run_ranks

# captured before any student cell runs: rebinding os.path.isfile or open later changes nothing here
_ISFILE = os.path.isfile
_MKDTEMP = tempfile.mkdtemp
_SCRATCH = os.getcwd()  # the sandbox's scratch folder, the one the judge reads
_OPEN = builtins.open
_MAX_BYTES = 64 << 20  # far more than the exercise's checkpoint needs


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
    return _MKDTEMP(prefix="ckpt-", dir=_SCRATCH)


def who_writes(mod, spec, timeout):
    folder = _folder()

    def body(rank, world_size):
        model, opt = build(spec, spec["w0"])
        train(model, opt, spec, spec["before"])
        mod.save_on_rank_zero(os.path.join(folder, f"ckpt-rank{rank}.pt"), model, opt, spec["epoch"])
        return None

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


def complete_on_return(mod, spec, timeout):
    folder = _folder()
    path = os.path.join(folder, "ckpt.pt")

    def body(rank, world_size):
        model, opt = build(spec, spec["w0"])
        train(model, opt, spec, spec["before"])
        model.delay = spec["delay"] if rank == 0 else 0.0
        mod.save_on_rank_zero(path, model, opt, spec["epoch"])
        seen = _read(path)
        return {"exists": seen is not None, "digest": _digest(seen)}

    report = run_ranks(spec["world_size"], body, timeout=timeout)
    report["folder"] = os.path.basename(folder)  # the final file is read by the judge, from outside the sandbox
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
        # the value crosses as itself (the judge checks `type(epoch) is int`); anything else as a description
        if type(epoch) is torch.Tensor:
            epoch = epoch.detach().clone()
        elif type(epoch) not in (int, float, bool, type(None)):
            epoch = "<" + type(epoch).__name__ + ">"
        return {"epoch": epoch, "params": [p.detach().clone() for p in model.parameters()]}

    return run_ranks(spec["world_size"], body, timeout=timeout)
