"""Sandbox-side harness for `lost_gradients` (no expected values here).

Whether make_leaf's tensor is a leaf requiring grad is judged from an
effect, not from its flags: the judge picks an upstream gradient g, the
probe runs (t * g).sum().backward() and returns t.grad, which must be g.
The autograd engine's entry point is captured when the probes load (before
any student cell); a replaced or missing hook point fails the test."""

import os
import sys
import types

import torch
import torch.autograd

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_AG = torch.autograd
_ENGINE = vars(_AG).get("_engine_run_backward")
_ENGINE_CODE = getattr(_ENGINE, "__code__", None)


def _describe(t):
    if not isinstance(t, torch.Tensor):
        return {"type": type(t).__name__}
    return {
        "type": "Tensor",
        "is_leaf": bool(t.is_leaf),
        "requires_grad": bool(t.requires_grad),
        "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__,
        "dtype": str(t.dtype),
        "device": str(t.device),
        "shape": list(t.shape),
        "values": t.detach().cpu().clone(),
    }


def make_leaf_probe(mod, shape, device, dtype_name, try_backward=True, upstream=None):
    """Call make_leaf(shape[, device][, dtype]) and report what came back; then try
    (t * g).sum().backward() with g the judge's upstream (3 when None), and report t.grad."""
    kwargs = {}
    if device is not None:
        kwargs["device"] = device
    if dtype_name is not None:
        kwargs["dtype"] = getattr(torch, dtype_name)
    t = mod.make_leaf(tuple(shape), **kwargs)
    info = _describe(t)
    if info["type"] != "Tensor" or not try_backward:
        return info
    info["grad"] = None
    info["backward_error"] = None
    if t.requires_grad:
        try:
            g = 3 if upstream is None else upstream.to(dtype=t.dtype, device=t.device)
            (t * g).sum().backward()
            info["grad"] = None if t.grad is None else t.grad.detach().cpu().clone()
        except Exception as e:  # reported by the judge
            info["backward_error"] = f"{type(e).__name__}: {e}"
    return info


def _engine_tampered():
    """Why the engine hook point cannot be trusted ("" when it can)."""
    if type(_AG) is not types.ModuleType or sys.modules.get("torch.autograd") is not _AG:
        return "torch.autograd is no longer PyTorch's own module"
    current = vars(_AG).get("_engine_run_backward")
    if _ENGINE is None or current is None:
        return "torch.autograd._engine_run_backward is missing"
    if current is not _ENGINE or getattr(current, "__code__", None) is not _ENGINE_CODE:
        return "torch.autograd._engine_run_backward was replaced"
    if not os.path.abspath(_ENGINE_CODE.co_filename).startswith(_TORCH_DIR):
        return "torch.autograd._engine_run_backward is not PyTorch's own code"
    return ""


def intermediate_grad_probe(mod, w_values):
    """Call intermediate_grad on a fresh leaf requiring grad built from w_values; count how
    many times the autograd engine ran during the call."""
    w = w_values.clone().requires_grad_(True)
    tampered = _engine_tampered()
    calls = [0]

    def counting(*a, **k):
        calls[0] += 1
        return _ENGINE(*a, **k)

    if not tampered:
        vars(_AG)["_engine_run_backward"] = counting
    try:
        g = mod.intermediate_grad(w)
    finally:
        if not tampered:
            if vars(_AG).get("_engine_run_backward") is not counting:
                tampered = "torch.autograd._engine_run_backward was replaced during the call"
            vars(_AG)["_engine_run_backward"] = _ENGINE
    info = _describe(g)
    info["engine_calls"] = None if tampered else calls[0]
    info["tampered"] = tampered or None
    return info


def training_loss_probe(mod, logits_values, target, upstream):
    """Call training_loss on a leaf copy of the logits; return the value and the gradient of
    upstream * loss with respect to the logits (None when nothing flows back)."""
    logits = logits_values.clone().requires_grad_(True)
    loss = mod.training_loss(logits, target)
    info = _describe(loss)
    if info["type"] != "Tensor":
        return info
    info["grad"] = None
    info["grad_error"] = None
    if loss.requires_grad and loss.numel() == 1:
        try:
            (g,) = torch.autograd.grad(upstream * loss.reshape(()), logits, allow_unused=True)
            info["grad"] = None if g is None else g.detach().clone()
        except Exception as e:
            info["grad_error"] = f"{type(e).__name__}: {e}"
    return info


def make_leaf_seeded(mod, shape, dtype_name, plan):
    import random

    import numpy as np

    values = []
    for torch_seed, other_seed in plan:
        torch.manual_seed(torch_seed)
        np.random.seed(other_seed)
        random.seed(other_seed)
        t = mod.make_leaf(tuple(shape), dtype=getattr(torch, dtype_name))
        values.append(t.detach().cpu().clone() if isinstance(t, torch.Tensor) else None)
    return values


def losses_many(mod, cases, upstream):
    out = []
    for logits_values, target in cases:
        logits = logits_values.clone().requires_grad_(True)
        try:
            loss = mod.training_loss(logits, target)
        except NotImplementedError:
            raise
        except Exception as e:
            out.append({"type": "error", "error": f"{type(e).__name__}: {e}"})
            continue
        info = _describe(loss)
        info["logits_after"] = logits.detach().clone()
        info["target_after"] = target
        info["grad"] = None
        info["grad_error"] = None
        if info["type"] == "Tensor" and loss.requires_grad and loss.numel() == 1:
            try:
                (g,) = torch.autograd.grad(upstream * loss.reshape(()), logits, allow_unused=True)
                info["grad"] = None if g is None else g.detach().clone()
            except Exception as e:
                info["grad_error"] = f"{type(e).__name__}: {e}"
        out.append(info)
    return out
