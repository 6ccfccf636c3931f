"""Sandbox-side harness for `accumulation` (no expected values here).

Which batches the model saw is measured by a TorchDispatchMode, below anything
an ordinary call can skip (a module hook misses `model[0].forward(X)`, and
`type(m).forward`): every ATen op outside autograd's backward pass that reads
the first layer's weight storage records the other tensors it reads, which are
the rows of X that went through the model. Removing the mode fails closed.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils._pytree as _pytree
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

LOSSES = {"mse": F.mse_loss, "cross_entropy": F.cross_entropy, "l1": F.l1_loss}


def _build(sizes):
    d_in, hidden, d_out = sizes
    return nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out)).double()


def _storage(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # a tensor without storage: not the weight
        return None


class _FirstLayerInputs(TorchDispatchMode):
    """The inputs of every forward op that reads the first layer's weight (or a view of it)."""

    def __init__(self, weight, params):
        super().__init__()
        self.weight = _storage(weight)
        self.params = {_storage(p) for p in params}
        self.seen = []
        self.order = []  # "F" for each forward op through the first layer, "B" for each op of a backward pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if torch._C._current_graph_task_id() == -1:
            tensors = [t for t in _pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            if any(_storage(t) == self.weight for t in tensors):
                self.order.append("F")
                for t in tensors:
                    if _storage(t) not in self.params and t.dim() >= 1:
                        self.seen.append(t.detach().clone())
        elif not self.order or self.order[-1] != "B":
            self.order.append("B")
        return func(*args, **kwargs)


def run_accumulation(mod, sizes, state, X, Y, micro_batch_size, loss_name, prefill):
    model = _build(sizes)
    model.load_state_dict(state)
    if prefill is not None:
        for p in model.parameters():
            p.grad = torch.full_like(p, float(prefill))
    watch = _FirstLayerInputs(model[0].weight, list(model.parameters()))
    tampered = None
    with watch:
        try:
            if loss_name is None:
                returned = mod.accumulate_gradients(model, X, Y, micro_batch_size)
            else:
                returned = mod.accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=LOSSES[loss_name])
        finally:
            if _get_current_dispatch_mode() is not watch:
                tampered = "the grader's dispatch mode was removed from torch's mode stack during the call"
    seen = None if tampered else watch.seen
    return {
        "grads": {name: (None if p.grad is None else p.grad.detach().clone()) for name, p in model.named_parameters()},
        "forward_inputs": seen,
        "order": None if tampered else "".join(watch.order),
        "tampered": tampered,
        "returned": None if returned is None else type(returned).__name__,
        "X": X,
        "Y": Y,
    }


def run_many(mod, runs):
    return [run_accumulation(mod, *run) for run in runs]


def run_plain(mod, sizes, state, X, Y, micro_batch_size):
    """accumulate_gradients with nothing of the grader's around it: the judge measures the sandbox's peak
    memory from outside (the kernel's cgroup counter) while it runs, and checks the gradients."""
    model = _build(sizes)
    model.load_state_dict(state)
    returned = mod.accumulate_gradients(model, X, Y, micro_batch_size)
    return {
        "grads": {name: (None if p.grad is None else p.grad.detach().clone()) for name, p in model.named_parameters()},
        "returned": None if returned is None else type(returned).__name__,
    }
