"""Sandbox side of the contract's conventions: a call observed for what it leaves behind.

Lent to probes (``runtime.PROBE_LIBRARY``) and reachable from suites as
``sandbox.ref("autograder.sandbox.conventions.observe")``. :func:`observe` calls a student's function
and reports, as plain values, what the judge (:mod:`autograder.judge.conventions`) checks against the
contract's conventions: its inputs as they are after the call (tensors and arrays by value; modules,
optimizers, schedulers and scalers as what changed in them), and evidence of torch's global settings
before and after. The settings are shown by what they do, not by what a getter says: a gradient that
autograd computes on the judge's values, and a tensor built with the default dtype from the judge's
values. No expected value lives here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

# bound now, before student code can rebind torch's names
_grad = torch.autograd.grad
_tensor = torch.tensor
_set_grad = torch.set_grad_enabled
_is_grad = torch.is_grad_enabled
_equal = torch.equal
_Module = torch.nn.Module
_Optimizer = torch.optim.Optimizer
_LRScheduler = torch.optim.lr_scheduler.LRScheduler
_array_equal = np.array_equal


def settings(probe: torch.Tensor) -> dict[str, Any]:
    """What torch's global settings do now: ``grad`` is autograd's gradient of ``sum(probe ** 3)`` (None when
    gradient recording is off), ``default`` the judge's values as a tensor of the default dtype."""
    leaf = probe.detach().clone().requires_grad_(True)
    y = (leaf * leaf * leaf).sum()
    grad = _grad(y, leaf)[0].detach() if y.requires_grad else None
    return {"grad": grad, "default": _tensor(probe.tolist())}


def _scaler_like(obj: Any) -> bool:
    return type(obj).__name__ == "GradScaler" and callable(getattr(obj, "state_dict", None))


def _plain(value: Any) -> Any:
    """A state dict's values as comparable plain values (tensors cloned)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if value is None or isinstance(value, bool | int | float | str) else repr(type(value))


def snapshot(obj: Any) -> Any:
    """What of ``obj`` a call must leave as it found it (None: nothing the conventions speak of)."""
    if isinstance(obj, torch.Tensor):
        return ("tensor", obj.detach().clone(), obj.dtype, tuple(obj.shape), obj.stride(), obj.requires_grad)
    if isinstance(obj, np.ndarray):
        return ("array", obj.copy(), obj.dtype, obj.shape)
    if isinstance(obj, _Module):
        return ("module", _plain(dict(obj.state_dict())), [(n, m.training) for n, m in obj.named_modules()],
                [(n, p.requires_grad) for n, p in obj.named_parameters()])
    if isinstance(obj, _Optimizer | _LRScheduler) or _scaler_like(obj):
        return ("state", _plain(obj.state_dict()))
    if isinstance(obj, list | tuple):
        return ("seq", [snapshot(v) for v in obj])
    if isinstance(obj, dict):
        return ("map", {k: snapshot(v) for k, v in obj.items()})
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype \
                or a.shape != b.shape:
            return False
        if a.is_floating_point():
            return _equal(a.isnan(), b.isnan()) and _equal(a.nan_to_num(0.0), b.nan_to_num(0.0))
        return _equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or (a != a and b != b)  # noqa: PLR0124 - NaN equals NaN here


def changes(before: Any, after: Any, what: str) -> list[str]:
    """How ``after`` differs from ``before`` (snapshots of one object), one phrase per difference."""
    if before is None:
        return []
    kind = before[0]
    if after is None or after[0] != kind:
        return [f"{what} is no longer what it was"]
    if kind == "tensor":
        _, v0, dt0, sh0, st0, rg0 = before
        _, v1, dt1, sh1, st1, rg1 = after
        out = []
        if (dt0, sh0) != (dt1, sh1):
            out.append(f"{what} changed from {sh0} {dt0} to {sh1} {dt1}")
        elif not _same(v0, v1):
            diff = (v0 != v1) & ~(v0.isnan() & v1.isnan()) if v0.is_floating_point() else v0 != v1
            out.append(f"{what} had its values changed ({int(diff.sum())} of {v0.numel()} elements)")
        elif st0 != st1:
            out.append(f"{what} had its strides changed from {st0} to {st1}")
        if rg0 != rg1:
            out.append(f"{what} had requires_grad switched {'on' if rg1 else 'off'}")
        return out
    if kind == "array":
        _, v0, dt0, sh0 = before
        _, v1, dt1, sh1 = after
        if (dt0, sh0) != (dt1, sh1):
            return [f"{what} changed from {sh0} {dt0} to {sh1} {dt1}"]
        return [] if _array_equal(v0, v1, equal_nan=v0.dtype.kind == "f") else [f"{what} had its values changed"]
    if kind == "module":
        _, s0, modes0, flags0 = before
        _, s1, modes1, flags1 = after
        out = [f"{what}'s {k} changed" for k in s0 if k not in s1 or not _same(s0[k], s1[k])]
        out += [f"{what} gained {k} in its state_dict" for k in s1 if k not in s0]
        if modes0 != modes1:
            was = dict(modes0)
            flipped = [n or "the module itself" for n, t in modes1 if was.get(n, t) != t]
            out.append(f"{what} was left in {'train' if dict(modes1).get('', True) else 'eval'} mode "
                       f"(it was in {'train' if was.get('', True) else 'eval'} mode; changed: "
                       f"{', '.join(flipped[:3]) or 'its submodules'})")
        if flags0 != flags1:
            out.append(f"{what} had requires_grad of its parameters changed")
        return out
    if kind == "state":
        return [] if _same(before[1], after[1]) else [f"{what}'s state_dict changed"]
    if kind == "seq":
        if len(before[1]) != len(after[1]):
            return [f"{what} changed length"]
        return [c for i, (b, a) in enumerate(zip(before[1], after[1], strict=True))
                for c in changes(b, a, f"{what}[{i}]")]
    if kind == "map":
        return [c for k, b in before[1].items() for c in changes(b, after[1].get(k), f"{what}[{k!r}]")]
    return []


def observe(fn: Any, probe: torch.Tensor, *args: Any, _names: list[str] | None = None,
            _may_change: list[str] | None = None, _grad_mode: bool | None = None,
            _requires_grad: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
    """Call ``fn(*args, **kwargs)``; its value, its arguments after the call, what changed in them, and the
    global settings' evidence (:func:`settings` of ``probe``) before and after.

    ``_names`` names the positional arguments (for the messages); ``_may_change`` lists those the exercise
    says the function changes (a model it trains), left out of ``changed``; ``_grad_mode`` runs the call
    with gradient recording set so (as found), restoring the caller's afterwards; ``_requires_grad`` names the
    tensor arguments made leaves requiring grad before the call (a tensor never crosses the wire requiring grad).
    """
    names = list(_names or []) + [f"argument {i + 1}" for i in range(len(_names or []), len(args))]
    leaves = set(_requires_grad or [])
    args = tuple(a.detach().clone().requires_grad_(True) if names[i] in leaves and isinstance(a, torch.Tensor)
                 else a for i, a in enumerate(args))
    watched = [(names[i], a) for i, a in enumerate(args)] + list(kwargs.items())
    skip = set(_may_change or [])
    outer = _is_grad()
    if _grad_mode is not None:
        _set_grad(_grad_mode)
    try:
        before_settings = settings(probe)
        before = [(n, snapshot(a)) for n, a in watched if n not in skip]
        value = fn(*args, **kwargs)
        after_settings = settings(probe)
        changed = [c for (n, b) in before for c in changes(b, snapshot(dict(watched)[n]), f"`{n}`")]
    finally:
        _set_grad(outer)
    return {"value": value, "args": list(args), "kwargs": dict(kwargs), "changed": changed,
            "settings_before": before_settings, "settings_after": after_settings}
