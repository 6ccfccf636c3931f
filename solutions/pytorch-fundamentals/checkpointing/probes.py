"""Sandbox-side harness for checkpointing.

resume_experiment trains a small dropout MLP twice from the same seed: once
without interruption, once interrupted after `stop` epochs, saved with the
student's save_checkpoint, the process "restarted" (the global generator
reseeded elsewhere, every object rebuilt with other initial weights) and
resumed with load_checkpoint. It returns both final parameter sets, the
value load_checkpoint returned and the raw bytes of the checkpoint file; the
judge compares and unpickles (weights_only=True) on its side.

epoch_loss_run calls epoch_loss with a loss function that tags each batch's
loss with a small autograd node holding a token object, and counts, at every
call, how many earlier batches' tokens are still alive: a token stays alive
exactly as long as that batch's autograd graph is kept.
"""
import gc
import os
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def _build(spec):
    d, h, c = spec["sizes"]
    model = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Dropout(spec["dropout"]),
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
    return [p.detach().clone() for p in model.parameters()]


def resume_experiment(mod, spec):
    loader = DataLoader(TensorDataset(spec["X"], spec["Y"]),
                        batch_size=spec["batch_size"], shuffle=True)
    epochs, stop = spec["epochs"], spec["stop"]

    torch.manual_seed(spec["seed"])
    model, opt, sched = _build(spec)
    for _ in range(epochs):
        _train_epoch(model, loader, opt)
        sched.step()
    uninterrupted = _params(model)
    lr_uninterrupted = opt.param_groups[0]["lr"]

    torch.manual_seed(spec["seed"])
    model, opt, sched = _build(spec)
    for _ in range(stop):
        _train_epoch(model, loader, opt)
        sched.step()
    path = os.path.join(os.getcwd(), spec["file"])
    if os.path.exists(path):
        os.remove(path)
    mod.save_checkpoint(path, model, opt, sched, stop)
    del model, opt, sched

    torch.manual_seed(spec["seed"] + 7919)          # a "new process"
    model, opt, sched = _build(spec)
    returned = mod.load_checkpoint(path, model, opt, sched)
    for _ in range(stop, epochs):
        _train_epoch(model, loader, opt)
        sched.step()
    resumed = _params(model)

    data = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
    is_int = isinstance(returned, int) and not isinstance(returned, bool)
    return {"uninterrupted": uninterrupted, "resumed": resumed,
            "lr_uninterrupted": lr_uninterrupted, "lr_resumed": opt.param_groups[0]["lr"],
            "returned_type": type(returned).__name__,
            "returned": returned if is_int else None,
            "file": data}


class _Token:
    pass


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

    class _Tag(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            token = _Token()
            ctx.token = token            # lives exactly as long as this graph node
            tokens.append(weakref.ref(token))
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad

    modes = []

    def loss_fn(output, target):
        modes.append("train" if model.training else "eval")
        alive = sum(1 for t in tokens if t() is not None)
        if alive > 1:  # graphs are freed by reference counting; collect only to rule out a cycle
            gc.collect()
            alive = sum(1 for t in tokens if t() is not None)
        alive_at_call.append(alive)
        return _Tag.apply(base_loss(output, target))

    value = mod.epoch_loss(model, loader, loss_fn)
    return {"value": value.detach() if isinstance(value, torch.Tensor) else value,
            "alive_at_call": alive_at_call, "modes": modes,
            "mode_after": "train" if model.training else "eval"}
