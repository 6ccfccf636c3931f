"""Sandbox-side harness for checkpointing.

The resume experiment crosses a process restart the way a real one does:
save_after trains a small dropout MLP for `stop` epochs with the trusted loop
below and calls the student's save_checkpoint; only the file's bytes come
back. The judge then starts a FRESH sandbox (the student's cells replayed,
nothing else), where resume_from writes those bytes to a file, rebuilds every
object from another seed, calls load_checkpoint and trains the remaining
epochs. The uninterrupted run is never computed here: the judge trains it
itself and compares. No expected values live in this file.

epoch_loss_run calls epoch_loss with a loss function that puts a small custom
autograd node on each batch's loss and keeps a weak reference to that node
(never an attribute on it, which vars(node).clear() would remove), and counts,
at every call, how many earlier batches' nodes are still alive: a node lives
exactly as long as that batch's autograd graph is kept.
"""
import gc
import os
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from autograder.sandbox.conventions import observe

# what the graph counter relies on, captured before any student cell runs
_WEAKREF = weakref.ref
_COLLECT = gc.collect
_FUNCTION = torch.autograd.Function


def _build(spec):
    d, h, c = spec["sizes"]
    norm = [nn.BatchNorm1d(h)] if spec.get("batchnorm") else []
    model = nn.Sequential(nn.Linear(d, h), *norm, nn.ReLU(), nn.Dropout(spec["dropout"]),
                          nn.Linear(h, h), nn.ReLU(), nn.Dropout(spec["dropout"]),
                          nn.Linear(h, c))
    o = spec["optimizer"]
    if o["kind"] == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=o["lr"], weight_decay=o["weight_decay"])
    elif o["kind"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=o["lr"])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=o["lr"], momentum=o["momentum"])
    s = spec["scheduler"]
    if s["kind"] == "step":
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=s["step_size"], gamma=s["gamma"])
    else:
        base = s["base"]
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: base ** e)
    return model, opt, sched


def _train_epoch(model, loader, opt):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def _params(model):
    return [t.detach().clone() for t in model.state_dict().values()]  # buffers (BatchNorm's statistics) too


def _seen(obs):
    """What the judge checks of an observed call (autograder.sandbox.conventions): no handles."""
    return {k: obs[k] for k in ("changed", "settings_before", "settings_after")}


def _loader(spec):
    return DataLoader(TensorDataset(spec["X"], spec["Y"]),
                      batch_size=spec["batch_size"], shuffle=True)


def save_after(mod, spec):
    loader = _loader(spec)
    torch.manual_seed(spec["seed"])
    model, opt, sched = _build(spec)
    for _ in range(spec["stop"]):
        _train_epoch(model, loader, opt)
        sched.step()
    path = os.path.join(os.getcwd(), spec["file"])
    if os.path.exists(path):
        os.remove(path)
    obs = observe(mod.save_checkpoint, spec["probe"], path, model, opt, sched, spec["stop"],
                  _names=["path", "model", "optimizer", "scheduler", "epoch"])
    data = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
    return {"file": data, "seen": _seen(obs)}


def resume_from(mod, spec, data):
    loader = _loader(spec)
    path = os.path.join(os.getcwd(), spec["file"])
    with open(path, "wb") as f:
        f.write(data)
    torch.manual_seed(spec["rebuild_seed"])          # a new process builds other weights
    model, opt, sched = _build(spec)
    obs = observe(mod.load_checkpoint, spec["probe"], path, model, opt, sched,
                  _names=["path", "model", "optimizer", "scheduler"], _may_change=["model", "optimizer", "scheduler"])
    returned = obs["value"]
    for _ in range(spec["stop"], spec["epochs"]):
        _train_epoch(model, loader, opt)
        sched.step()
    # the value crosses as itself (the judge checks `type(returned) is int`); anything else as a description
    plain = type(returned) in (int, float, bool, type(None))
    return {"resumed": _params(model), "lr_resumed": opt.param_groups[0]["lr"],
            "returned": returned if plain else "<" + type(returned).__name__ + ">", "seen": _seen(obs)}


def epoch_loss_run(mod, spec):
    d, h, c = spec["sizes"]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(d, h), nn.BatchNorm1d(h), nn.Tanh(), nn.Linear(h, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), spec["weights"]):
            p.copy_(w)
        model[1].running_mean.copy_(spec["running_mean"])
        model[1].running_var.copy_(spec["running_var"])
    model.train(spec["mode"] == "train")
    data = TensorDataset(spec["X"], spec["Y"])
    batches, start = [], 0
    for size in spec["batch_sizes"]:
        batches.append(list(range(start, start + size)))
        start += size
    loader = DataLoader(data, batch_sampler=batches)
    tokens, alive_at_call = [], []
    base_loss = F.cross_entropy if spec["loss"] == "cross_entropy" else F.mse_loss

    class _Tag(_FUNCTION):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad

    modes = []

    def loss_fn(output, target):
        modes.append("train" if model.training else "eval")
        alive = sum(1 for t in tokens if t() is not None)
        if alive > 1:  # graphs are freed by reference counting; collect only to rule out a cycle
            _COLLECT()
            alive = sum(1 for t in tokens if t() is not None)
        alive_at_call.append(alive)
        out = _Tag.apply(base_loss(output, target))
        # a weak reference to the graph node itself: it dies exactly when the batch's graph does,
        # whatever is written to or cleared from the node's attributes
        if out.grad_fn is not None:  # under no_grad there is no graph to keep
            tokens.append(_WEAKREF(out.grad_fn))
        return out

    obs = observe(mod.epoch_loss, spec["probe"], model, loader, loss_fn, _names=["model", "loader", "loss_fn"],
                  _may_change=["model"] if spec["mode"] == "train" else [], _grad_mode=spec.get("grad_mode"))
    value = obs["value"]
    # the mode the model was left in, as values: its output on the judge's batch (BatchNorm normalises with
    # the batch's statistics in train mode, with the running ones in eval mode); the judge computes both
    with torch.no_grad():
        after = model(spec["X_after"]).detach().clone()
    return {"value": value.detach() if isinstance(value, torch.Tensor) else value,
            "alive_at_call": alive_at_call, "modes": modes, "output_after": after,
            "mode_after": "train" if model.training else "eval", "seen": _seen(obs)}


def epoch_loss_plain(mod, spec):
    """epoch_loss on a wide model with nothing of the grader's around it: the judge measures the sandbox's peak
    memory from outside (the kernel's cgroup counter) while it runs, and checks the value."""
    W1, b1, W2, b2 = spec["weights"]
    model = nn.Sequential(nn.Linear(W1.shape[1], W1.shape[0]), nn.Tanh(), nn.Linear(W2.shape[1], W2.shape[0]))
    model = model.double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), (W1, b1, W2, b2)):
            p.copy_(w)
    loader = DataLoader(TensorDataset(spec["X"], spec["Y"]), batch_size=spec["batch_size"])
    value = mod.epoch_loss(model, loader, F.cross_entropy)
    return {"value": value.detach() if isinstance(value, torch.Tensor) else value}
