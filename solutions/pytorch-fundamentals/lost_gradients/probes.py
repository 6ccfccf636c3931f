"""Sandbox-side harness for `lost_gradients` (no expected values here).

Whether make_leaf's tensor is a leaf requiring grad is judged from an
effect and its flags together: the judge picks an upstream gradient g, the
probe runs (t * g).sum().backward() and returns t.grad, which must be g.
Whether intermediate_grad's result came from autograd is measured by a
TorchDispatchMode (below any Python-level hook a call could skip): the result's
storage must be one that the engine's backward pass wrote, or made only from such
storages (every public autograd API counts: backward, torch.autograd.grad,
torch.autograd.functional.*, torch.func.grad/vjp/jacrev). Both facts live in the
student's process, so they are advice worth 0 points (issue 43); the points rest on
the values the judge checks."""

import torch
import torch.utils._pytree as _pytree
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode


def _describe(t):
    if not isinstance(t, torch.Tensor):
        return {"type": type(t).__name__}
    return {
        "type": "Tensor",
        "exact_type": type(t).__name__,
        "is_leaf": bool(t.is_leaf),
        "requires_grad": bool(t.requires_grad),
        "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__,
        "dtype": str(t.dtype),
        "device": str(t.device),
        "shape": list(t.shape),
        "values": t.detach().cpu().clone().as_subclass(torch.Tensor),  # a subclass's values cross as plain ones
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
            info["grad"] = None if t.grad is None else t.grad.detach().cpu().clone().as_subclass(torch.Tensor)
        except Exception as e:  # reported by the judge
            info["backward_error"] = f"{type(e).__name__}: {e}"
    return info


def make_leaf_device(mod, shape, device):
    """Call make_leaf(shape, device=device) for a device that holds no values ("meta"): where its tensor lives."""
    t = mod.make_leaf(tuple(shape), device=device)
    if not isinstance(t, torch.Tensor):
        return {"type": type(t).__name__}
    return {"type": "Tensor", "device": str(t.device), "is_leaf": bool(t.is_leaf),
            "requires_grad": bool(t.requires_grad), "shape": list(t.shape)}


# ops that give back their (first) input's values: a copy of autograd's result is still autograd's result
_COPIES = {"clone", "_to_copy", "copy_", "detach", "alias", "view", "_unsafe_view", "reshape", "contiguous",
           "expand", "squeeze", "unsqueeze", "lift_fresh", "lift_fresh_copy", "_reshape_alias", "t", "permute"}


def _storage(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # a tensor without storage (meta, a subclass): never autograd's result
        return None


class _GradientOrigin(TorchDispatchMode):
    """Which storages autograd's backward pass wrote (or copies of them outside it).

    A dispatch mode sees every ATen op, the engine's own included, below anything an
    ordinary call can skip; the graph-task id tells the engine's ops from the caller's."""

    def __init__(self):
        super().__init__()
        self.keep = []  # the tensors themselves: their storages cannot be reused while the call runs
        self.ptrs = set()

    def _mark(self, out):
        for t in _pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and (ptr := _storage(t)) is not None:
                self.ptrs.add(ptr)
                self.keep.append(t)

    def _all_marked(self, args, kwargs):
        tensors = [t for t in _pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        return bool(tensors) and all(_storage(t) in self.ptrs for t in tensors)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if torch._C._current_graph_task_id() != -1:
            self._mark(out)
        elif self._all_marked(args, kwargs):
            # every tensor it reads is autograd's: a stack, a reshape or a selection of autograd's results (how
            # torch.autograd.functional.jacobian assembles the rows torch.autograd.grad gave it) is autograd's
            self._mark(out)
        elif func.overloadpacket.__name__ in _COPIES:
            source = args[1] if func.overloadpacket.__name__ == "copy_" and len(args) > 1 else args[0] if args else None
            if isinstance(source, torch.Tensor) and _storage(source) in self.ptrs:
                self._mark(out)
        return out


def intermediate_grad_probe(mod, w_values):
    """Call intermediate_grad on a fresh leaf requiring grad built from w_values under a dispatch
    mode that records which storages autograd computed; report whether the result is one of them."""
    w = w_values.clone().requires_grad_(True)
    origin = _GradientOrigin()
    tampered = None
    with origin:
        try:
            g = mod.intermediate_grad(w)
        finally:
            if _get_current_dispatch_mode() is not origin:
                tampered = "the grader's dispatch mode was removed from torch's mode stack during the call"
    info = _describe(g)
    info["from_autograd"] = None if tampered else bool(isinstance(g, torch.Tensor) and _storage(g) in origin.ptrs)
    info["tampered"] = tampered
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
