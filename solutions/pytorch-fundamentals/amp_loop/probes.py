"""Sandbox-side harness for amp_loop: builds the model, loader, optimizer,
scheduler and scaler from plain specs sent by the judge, instruments them
with hooks, runs the student's train_epoch once and returns what happened.
No expected values live here."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset, TensorDataset

from autograder.sandbox.conventions import observe

# captured when the probes load, before any student cell: rebinding torch's later changes nothing here
_IS_AUTOCAST_ENABLED = torch.is_autocast_enabled
_GET_AUTOCAST_DTYPE = torch.get_autocast_dtype


def cuda_available(mod):
    return bool(torch.cuda.is_available())


def _build_model(sizes, weights, batchnorm=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            if batchnorm:
                layers.append(nn.BatchNorm1d(sizes[i + 1]))
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(w)
    return model


def _build_optimizer(model, spec):
    if spec["kind"] == "sgd":
        return torch.optim.SGD(model.parameters(), lr=spec["lr"],
                               momentum=spec.get("momentum", 0.0))
    if spec["kind"] == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=spec["lr"],
                                 weight_decay=spec["weight_decay"])
    raise ValueError(spec)


def _build_loader(spec):
    data = TensorDataset(spec["X"], spec["Y"])
    kind = spec.get("loader", "plain")
    if kind == "subset":
        data = Subset(data, spec["indices"])
    return DataLoader(data, batch_size=spec["batch_size"], shuffle=False,
                      sampler=spec["indices"] if kind == "sampler" else None,
                      drop_last=bool(spec.get("drop_last", False)))


def _build_scheduler(optimizer, spec):
    if spec["kind"] == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=spec["step_size"],
                                               gamma=spec["gamma"])
    if spec["kind"] == "lambda":
        alpha = spec["alpha"]
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0 / (1.0 + alpha * e))
    raise ValueError(spec)


def run_train_epoch(mod, spec):
    device = torch.device(spec["device"])
    model = _build_model(spec["sizes"], spec["weights"], spec.get("batchnorm", False)).to(device)
    if spec.get("eval_mode"):
        model.eval()  # handed over in eval mode: training an epoch is the function's job
    params = list(model.parameters())
    loader = _build_loader(spec)
    optimizer = _build_optimizer(model, spec["optimizer"])
    scheduler = _build_scheduler(optimizer, spec["scheduler"])
    scaler = torch.amp.GradScaler(device.type, init_scale=spec["init_scale"],
                                  growth_interval=spec.get("growth_interval", 2000))
    amp_dtype = torch.float16 if device.type == "cuda" else torch.bfloat16

    log = {"grad_none_before": [], "autocast_in_backward": [], "autocast_in_forward": []}
    watched = params[0]
    calls = [0]
    inf_at = spec.get("inf_at")

    def tensor_hook(grad):
        # runs when the gradient for `watched` is ready, before it is
        # accumulated into watched.grad
        i = calls[0]
        calls[0] += 1
        log["grad_none_before"].append(watched.grad is None)
        log["autocast_in_backward"].append(bool(_IS_AUTOCAST_ENABLED(device.type)))
        if inf_at is not None and i == inf_at:
            return torch.full_like(grad, float("inf"))
        return grad

    def forward_pre_hook(module, args):
        log["autocast_in_forward"].append(
            [bool(_IS_AUTOCAST_ENABLED(device.type)),
             str(_GET_AUTOCAST_DTYPE(device.type))])

    watched.register_hook(tensor_hook)
    model.register_forward_pre_hook(forward_pre_hook)

    # max_grad_norm None: the call relies on the contract's default (1.0)
    clip = {} if spec["max_grad_norm"] is None else {"max_grad_norm": spec["max_grad_norm"]}
    obs = observe(mod.train_epoch, spec["probe"], model, loader, optimizer, scheduler, scaler, device=device,
                  accum_steps=spec["accum_steps"], amp_dtype=amp_dtype, **clip,
                  _names=["model", "loader", "optimizer", "scheduler", "scaler"],
                  _may_change=["model", "optimizer", "scheduler", "scaler"])
    result = obs["value"]
    return {
        "seen": {k: obs[k] for k in ("changed", "settings_before", "settings_after")},
        "data_after": [spec["X"], spec["Y"]],
        "result": result,
        "params": [p.detach().to("cpu", copy=True) for p in params],
        "lr": float(optimizer.param_groups[0]["lr"]),
        "last_epoch": int(scheduler.last_epoch),
        "scale": float(scaler.get_scale()),
        "log": log,
    }
