"""Sandbox-side harness for `param_counts` (no expected values here)."""
import torch
from torch import nn


def build_model(spec):
    """Build a model from a judge-given list of operations (see the hidden suite)."""
    root = nn.Module()

    def place(path, module):
        parent, _, name = path.rpartition(".")
        (root.get_submodule(parent) if parent else root).add_module(name, module)

    for op in spec:
        kind, path, args = op[0], op[1], op[2:]
        if kind == "container":
            place(path, nn.Module())
        elif kind == "linear":
            place(path, nn.Linear(args[0], args[1], bias=args[2]))
        elif kind == "batchnorm":
            place(path, nn.BatchNorm1d(args[0]))
        elif kind == "layernorm":
            place(path, nn.LayerNorm(args[0]))
        elif kind == "embedding":
            place(path, nn.Embedding(args[0], args[1]))
        elif kind == "conv":
            place(path, nn.Conv2d(args[0], args[1], args[2], bias=args[3]))
        elif kind == "relu":
            place(path, nn.ReLU())
        elif kind == "param":
            parent, _, name = path.rpartition(".")
            owner = root.get_submodule(parent) if parent else root
            owner.register_parameter(name, nn.Parameter(torch.zeros(args[0])))
        elif kind == "buffer":
            parent, _, name = path.rpartition(".")
            owner = root.get_submodule(parent) if parent else root
            owner.register_buffer(name, torch.zeros(args[0]))
        elif kind == "tie":  # tie path (module.attr) to the parameter at args[0]
            parent, _, name = path.rpartition(".")
            setattr(root.get_submodule(parent), name, root.get_parameter(args[0]))
        elif kind == "freeze":
            root.get_parameter(path).requires_grad_(False)
        else:
            raise ValueError(f"unknown op {kind}")
    return root


def count_probe(mod, spec, trainable_only):
    model = build_model(spec)
    if trainable_only is None:
        n = mod.count_parameters(model)
    else:
        n = mod.count_parameters(model, trainable_only=trainable_only)
    return n


def _linears(m):
    """The Linear layers of m in registration order; when none are registered, the ones kept
    in plain Python lists/tuples/dicts attributes (so that the forward can still be graded)."""
    found = [x for x in m.modules() if isinstance(x, nn.Linear)]
    if found:
        return found, True
    for v in vars(m).values():
        items = v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else []
        found.extend(x for x in items if isinstance(x, nn.Linear))
    return found, False


def stack_info(mod, n_layers, width):
    m = mod.LayerStack(n_layers, width)
    params = list(m.parameters())
    sd = m.state_dict()
    return {
        "is_module": isinstance(m, nn.Module),
        "n_params": sum(p.numel() for p in params),
        "n_param_tensors": len(params),
        "state_dict": {k: list(v.shape) for k, v in sd.items()},
        "linear_count": len(_linears(m)[0]),
        "registered": _linears(m)[1],
        "linear_uses": sum(isinstance(x, nn.Linear)
                           for _, x in m.named_modules(remove_duplicate=False)),
    }


def stack_forward(mod, n_layers, width, weights, biases, x):
    m = mod.LayerStack(n_layers, width)
    linears, registered = _linears(m)
    if len(linears) != n_layers or len({id(x) for x in linears}) != n_layers:
        return {"ok": False, "linear_count": len(linears),
                "distinct": len({id(x) for x in linears})}
    with torch.no_grad():
        for lin, w, b in zip(linears, weights, biases):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
    with torch.no_grad():
        out = m(x)
    return {"ok": True, "out": out.detach().clone() if isinstance(out, torch.Tensor) else repr(out)}


def stack_to(mod, n_layers, width, x):
    m = mod.LayerStack(n_layers, width)
    r = m.to(torch.float64)
    linears, _ = _linears(m)
    info = {
        "returns_self": r is m,
        "param_dtypes": [str(p.dtype) for p in m.parameters()],
        "linear_dtypes": [str(lin.weight.dtype) for lin in linears],
        "forward_error": None,
        "out_dtype": None,
    }
    try:
        with torch.no_grad():
            out = m(x)
        info["out_dtype"] = str(out.dtype)
    except NotImplementedError:
        raise
    except Exception as e:
        info["forward_error"] = f"{type(e).__name__}: {e}"
    return info
