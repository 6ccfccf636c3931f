"""Sandbox-side harness for `mlp_backward` (no expected values here)."""

import contextlib

import torch

# captured when the probes load, before any student cell: rebinding it later changes nothing here
_BACKWARD_C_FUNCTION = torch.autograd.function.BackwardCFunction


def _plain(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    return v


def backward_no_grad(mod, X, y, W1, b1, W2, b2, no_grad=True):
    """mlp_backward with inputs that do not require grad, under torch.no_grad() when asked.

    Whether recording was off exists only here, in the student's process (torch.enable_grad() inside the
    function undoes it): the graded values are computed with recording on, and the no_grad() run is advice
    worth 0 points (issue 43)."""
    fn = mod.mlp_backward  # a missing name is reported by the engine, not here
    try:
        with torch.no_grad() if no_grad else contextlib.nullcontext():
            g = fn(X, y, W1, b1, W2, b2)
    except NotImplementedError:
        raise
    except Exception as e:  # reported to the student by the judge
        return {"type": "error", "error": f"{type(e).__name__}: {e}"}
    if isinstance(g, dict):
        return {
            "type": "dict",
            "value": {str(k): _plain(v) if isinstance(v, torch.Tensor) else type(v).__name__ for k, v in g.items()},
        }
    return {"type": type(g).__name__}


def _graph_nodes(fn, limit=10000):
    seen, stack, names, custom = set(), [fn], [], False
    while stack and len(seen) < limit:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        if isinstance(node, _BACKWARD_C_FUNCTION):
            custom = True
        stack.extend(nxt for nxt, _ in getattr(node, "next_functions", ()))
    return names, custom


def _own_node(loss, weights):
    """Whether the loss's own grad_fn is a custom Function's node with the weights as direct inputs.

    A custom node anywhere in the graph is not enough: an identity Function wrapped around
    a plain autograd loss puts one in front of any graph. The weights must be the leaves the
    node's own edges reach (AccumulateGrad nodes of exactly these tensors)."""
    fn = loss.grad_fn
    if not isinstance(fn, _BACKWARD_C_FUNCTION):
        return False, "its grad_fn is " + (type(fn).__name__ if fn is not None else "None")
    leaves = []
    for nxt, _ in fn.next_functions:
        variable = getattr(nxt, "variable", None) if nxt is not None else None
        if isinstance(variable, torch.Tensor):
            leaves.append(variable)
    missing = [k for k, w in zip(("W1", "b1", "W2", "b2"), weights) if not any(v is w for v in leaves)]
    if missing:
        return False, "its custom node does not take " + ", ".join(missing) + " as direct inputs"
    return True, ""


def loss_and_grads(mod, X, y, W1, b1, W2, b2, upstream):
    """mlp_loss on weights requiring grad; reports the loss, the autograd graph's node types
    and torch.autograd.grad(upstream * loss, weights)."""
    ws = [t.clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    loss = mod.mlp_loss(X, y, *ws)
    if not isinstance(loss, torch.Tensor):
        return {"type": type(loss).__name__}
    names, custom = _graph_nodes(loss.grad_fn)
    own, why = _own_node(loss, ws)
    info = {
        "type": "Tensor",
        "value": loss.detach().clone(),
        "requires_grad": loss.requires_grad,
        "nodes": names[:20],
        "custom_function": custom,
        "own_custom_node": own,
        "own_node_problem": why,
        "grads": None,
        "grad_error": None,
    }
    if loss.requires_grad and loss.numel() == 1:
        try:
            grads = torch.autograd.grad(upstream * loss.reshape(()), ws, allow_unused=True)
            info["grads"] = [None if g is None else g.detach().clone() for g in grads]
        except Exception as e:
            info["grad_error"] = f"{type(e).__name__}: {e}"
    return info


def backward_many(mod, problems, no_grad=False):
    return [backward_no_grad(mod, *p, no_grad=no_grad) for p in problems]
