"""The contract's conventions, checked on any call: inputs left unmodified, global settings left as found.

``as_found(sandbox, fn, *args)`` runs ``fn`` (a student's function or class, reached through the
``student`` fixture, or a probe-made object) in the sandbox through
:func:`autograder.sandbox.conventions.observe` and fails the test, as the student's mistake, when the
call changed one of its inputs or torch's global settings (gradient mode and the default dtype).
Tensors and arrays the judge passed come back by value and are compared here with the judge's own
copies; the global settings are judged by what they do (autograd's gradient of the judge's values,
the default dtype's rounding of them), never by a getter the student could rebind. Messages say what
came back, never a cause.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from autograder.errors import GraderError
from autograder.judge.feedback import fail

OBSERVE = "autograder.sandbox.conventions.observe"

INPUTS = ("The contract's conventions: a function must not modify its inputs in place unless its exercise says "
          "so. Work on a copy, or use the out-of-place form of the operation (x.round() rather than x.round_(), "
          "y = x + 1 rather than x += 1).")
SETTINGS = ("The contract's conventions: a function leaves torch's global settings as it found them (gradient "
            "mode, torch.is_grad_enabled(), and the default dtype): use `with torch.no_grad():` or "
            "`with torch.enable_grad():` blocks, never torch.set_grad_enabled(...) or torch.set_default_dtype(...) "
            "as statements.")


def settings_probe(call: str) -> torch.Tensor:
    """The judge's values for the settings' evidence: different for each call, the same in every grading."""
    g = torch.Generator().manual_seed(zlib.crc32(call.encode()))
    return torch.randn(5, generator=g, dtype=torch.float64) * 2 + 0.25


def as_found(sandbox: Any, fn: Any, *args: Any, call: str, names: Sequence[str] = (),
             may_change: Sequence[str] = (), grad_mode: bool | None = None, requires_grad: Sequence[str] = (),
             **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in the sandbox, checked against both conventions; its value.

    ``call`` is how the message quotes the call (``"StraightThroughRound.apply(x)"``); ``names`` names the
    positional arguments; ``may_change`` those the exercise says the function changes (the model it
    trains); ``grad_mode`` runs the call with gradient recording on or off, as the caller found it;
    ``requires_grad`` names the tensor arguments that reach the call as leaves requiring grad.
    """
    probe = settings_probe(call)
    out = sandbox.ref(OBSERVE)(fn, probe, *args, _names=list(names), _may_change=list(may_change),
                              _grad_mode=grad_mode, _requires_grad=list(requires_grad), **kwargs)
    check_observed(out, probe, call=call, args=args, kwargs=kwargs, names=names, may_change=may_change,
                   grad_mode=grad_mode)
    return out["value"]


def check_observed(out: Any, probe: torch.Tensor, *, call: str, args: Sequence[Any] = (), kwargs: dict | None = None,
                   names: Sequence[str] = (), may_change: Sequence[str] = (), grad_mode: bool | None = None) -> None:
    """Both conventions on an observation a probe made (``observe`` of ``settings_probe(call)``), or as_found's."""
    if not isinstance(out, dict) or "changed" not in out:
        raise GraderError(f"observing {call} returned {type(out).__name__}, not the observation")
    check_inputs(out, args, kwargs or {}, call=call, names=names, may_change=may_change)
    check_settings(out, probe, call=call, grad_mode=grad_mode)


def _label(names: Sequence[str], i: int) -> str:
    return names[i] if i < len(names) else f"argument {i + 1}"


def _differs(before: Any, after: Any) -> str | None:
    """How a value the judge passed came back different, or None."""
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor):
            return f"came back as a {type(after).__name__}"
        if before.dtype != after.dtype or before.shape != after.shape:
            return f"came back as a {tuple(after.shape)} {after.dtype} tensor (it was {tuple(before.shape)} " \
                   f"{before.dtype})"
        if before.is_floating_point() and not torch.equal(before.isnan(), after.isnan()):
            return "came back with NaN where it had none"
        a, b = (before.nan_to_num(0.0), after.nan_to_num(0.0)) if before.is_floating_point() else (before, after)
        if not torch.equal(a, b):
            n = int((a != b).sum())
            i = int((a != b).flatten().nonzero()[0])
            return (f"came back with {n} of {before.numel()} values changed (element {i} of the flattened "
                    f"tensor was {before.flatten()[i].item()!r}, came back {after.flatten()[i].item()!r})")
        return None  # requires_grad never crosses the wire: the sandbox's own snapshot compares it
    if isinstance(before, np.ndarray):
        if not isinstance(after, np.ndarray) or before.dtype != after.dtype or before.shape != after.shape:
            return "came back as another array (dtype or shape changed)"
        if not np.array_equal(before, after, equal_nan=before.dtype.kind == "f"):
            return f"came back with {int((before != after).sum())} of {before.size} values changed"
        return None
    if isinstance(before, list | tuple) and isinstance(after, list | tuple) and len(before) == len(after):
        return next((f"[{i}] {d}" for i, (b, a) in enumerate(zip(before, after, strict=True))
                     if (d := _differs(b, a)) is not None), None)
    return None


def check_inputs(out: dict, args: Sequence[Any], kwargs: dict, *, call: str, names: Sequence[str] = (),
                 may_change: Sequence[str] = ()) -> None:
    """Fail when the call changed one of its inputs: as the sandbox saw it, or as the values came back."""
    changed = [str(c) for c in out.get("changed") or []]
    if changed:
        fail(f"After {call}, {changed[0]}" + (f" (and {len(changed) - 1} more change(s))" if len(changed) > 1
                                              else "") + f". {INPUTS}")
    back = list(out.get("args") or [])
    for i, before in enumerate(args):
        label = _label(names, i)
        if label in may_change or i >= len(back):
            continue
        if (how := _differs(before, back[i])) is not None:
            fail(f"After {call}, its input `{label}` {how}. {INPUTS}")
    back_kw = dict(out.get("kwargs") or {})
    for k, before in kwargs.items():
        if k not in may_change and (how := _differs(before, back_kw.get(k))) is not None:
            fail(f"After {call}, its input `{k}` {how}. {INPUTS}")


def _mode(evidence: dict) -> str:
    return "on" if evidence.get("grad") is not None else "off"


def check_settings(out: dict, probe: torch.Tensor, *, call: str, grad_mode: bool | None = None) -> None:
    """Fail when gradient mode or the default dtype after the call differ from before it.

    Each is judged by its effect on the judge's values: autograd's gradient of ``sum(probe ** 3)`` must
    be ``3 probe ** 2`` where recording is on, and the default-dtype tensor must be ``probe`` rounded to it.
    """
    before, after = out.get("settings_before"), out.get("settings_after")
    if not isinstance(before, dict) or not isinstance(after, dict):
        raise GraderError(f"observing {call} returned no evidence of the global settings")
    for when, ev in (("before", before), ("after", after)):
        g, d = ev.get("grad"), ev.get("default")
        if g is not None and not (isinstance(g, torch.Tensor) and g.shape == probe.shape
                                  and torch.allclose(g.double(), 3 * probe ** 2, rtol=1e-12, atol=0)):
            fail(f"{'Before' if when == 'before' else 'After'} {call}, autograd's gradient of sum(x ** 3) at "
                 f"x = {probe.tolist()} came back as {g!r}, not 3 x ** 2. {SETTINGS}")
        if not isinstance(d, torch.Tensor) or not d.is_floating_point() or d.shape != probe.shape \
                or not torch.equal(d, probe.to(d.dtype)):
            fail(f"{'Before' if when == 'before' else 'After'} {call}, torch.tensor({probe.tolist()}) came back "
                 f"as {d!r}, not those values in a floating dtype. {SETTINGS}")
    if grad_mode is not None and _mode(before) != ("on" if grad_mode else "off"):
        raise GraderError(f"{call} was to run with gradient recording {'on' if grad_mode else 'off'}, "
                          f"but it was {_mode(before)}")
    if _mode(before) != _mode(after):
        fail(f"After {call}, gradient recording was {_mode(after)} (torch.is_grad_enabled() is "
             f"{_mode(after) == 'on'}); the call found it {_mode(before)}. {SETTINGS}")
    if before["default"].dtype != after["default"].dtype:
        fail(f"After {call}, torch's default dtype was {after['default'].dtype}; the call found it "
             f"{before['default'].dtype}. {SETTINGS}")
