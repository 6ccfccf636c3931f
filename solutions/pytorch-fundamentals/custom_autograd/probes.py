"""Sandbox-side harness for custom_autograd: runs the student's Functions
through torch.autograd with upstream gradients chosen by the judge, and calls
second_derivative on functions named by the judge. No expected values here."""
import torch

_FUNCTIONS = {
    "sin": torch.sin,
    "exp": torch.exp,
    "cube": lambda t: t ** 3,
    "x_tanh": lambda t: t * torch.tanh(t),
    "log1p_sq": lambda t: torch.log1p(t * t),
    "linear": lambda t: 3.0 * t + 1.0,
}


def _node_name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def apply_with_grad(mod, fname, x, upstream):
    """y = mod.<fname>.apply(x) for a leaf x; the gradient for the upstream g."""
    fn = getattr(mod, fname)
    leaf = x.detach().clone().requires_grad_(True)
    y = fn.apply(leaf)
    node = _node_name(y)
    grad = None
    if y.requires_grad:
        (grad,) = torch.autograd.grad(y, leaf, grad_outputs=upstream, allow_unused=True)
    return {"y": y.detach(), "grad": grad, "node": node, "input_after": leaf.detach().clone()}


def ste_in_graph(mod, x, w, c):
    """loss = sum(c * STE(w * x)); the gradient with respect to the leaf w."""
    w = w.detach().clone().requires_grad_(True)
    loss = (c * mod.StraightThroughRound.apply(w * x)).sum()
    (gw,) = torch.autograd.grad(loss, w, allow_unused=True)
    return gw


def forward_values(mod, fname, x):
    leaf = x.detach().clone().requires_grad_(True)
    return getattr(mod, fname).apply(leaf).detach()


def second_derivative_of(mod, name, x, requires_grad=False):
    if requires_grad:  # the caller's x is a leaf that requires grad
        x = x.detach().clone().requires_grad_(True)
    out = mod.second_derivative(_FUNCTIONS[name], x)
    return {"value": out, "input_after": x.detach(),
            "input_requires_grad": bool(x.requires_grad)}


def is_autograd_function(mod, name):
    obj = getattr(mod, name)
    return isinstance(obj, type) and issubclass(obj, torch.autograd.Function)
