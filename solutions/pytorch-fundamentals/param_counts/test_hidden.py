"""Hidden suite for `param_counts`."""
import pytest
import torch
from torch import nn

from autograder.judge import assert_close, check, fail

# ---------------------------------------------------------------- judge-side model builder
# Same spec language as probes.build_model; the judge builds its own copy of each model and
# counts on it, the sandbox builds the student's copy.

def build_model(spec):
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
        elif kind == "tie":
            parent, _, name = path.rpartition(".")
            setattr(root.get_submodule(parent), name, root.get_parameter(args[0]))
        elif kind == "freeze":
            root.get_parameter(path).requires_grad_(False)
        else:
            raise ValueError(kind)
    return root


def _count(model, trainable_only):
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def _wrong_counts(model, trainable_only):
    """(count, diagnosis) for known-wrong approaches on the judge's copy of the model, single
    mistakes first, so that the diagnosis names the one that explains the value."""
    keep = lambda p: p.requires_grad or not trainable_only  # noqa: E731
    expected = _count(model, trainable_only)
    n_buffers = sum(b.numel() for b in model.buffers())
    per_module = sum(p.numel() for _, m in model.named_modules()
                     for p in m.parameters(recurse=False) if keep(p))
    leaves = sum(p.numel() for m in model.modules() if not list(m.children())
                 for p in m.parameters() if keep(p))
    out = []
    if n_buffers:
        out.append((expected + n_buffers,
                    "buffers (such as BatchNorm's running_mean/running_var/num_batches_tracked or "
                    "register_buffer tensors) were counted; they are not parameters"))
    if trainable_only:
        out.append((_count(model, False),
                    "frozen parameters (requires_grad=False) were counted although "
                    "trainable_only=True"))
    out.append((per_module, "a parameter shared by two modules (tied weights) was counted "
                            "twice; count each distinct parameter once"))
    out.append((leaves, "parameters registered directly on a container module (not inside a "
                        "leaf layer) were missed"))
    out.append((sum(t.numel() for t in model.state_dict().values()),
                "this counts everything in state_dict(), which also holds buffers and lists a "
                "tied weight under each of its names"))
    return [(v, msg) for v, msg in out if v != expected]


def _check_count(sandbox, spec, trainable_only, label):
    call = ("count_parameters(model)" if trainable_only is None
            else f"count_parameters(model, trainable_only={trainable_only})")
    info = sandbox.probe("count_probe", spec, trainable_only)
    check(info["type"] == "int",
          f"`{call}` for {label} should return a Python int, got a {info['type']} ({info['value']}).")
    model = build_model(spec)
    t_only = True if trainable_only is None else trainable_only
    expected = _count(model, t_only)
    got = info["value"]
    check(type(got) is int,  # judged on the value itself: the wire keeps NumPy and bool types
          f"`{call}` for {label} should return a Python int, got {type(got).__name__} ({got!r}).")
    if got != expected:
        why = next((msg for v, msg in _wrong_counts(model, t_only) if v == got and v != expected),
                   None)
        if trainable_only is None and got == _count(model, False):
            why = "the default must be trainable_only=True: frozen parameters were counted"
        fail(f"`{call}` for {label} returned {got}, which is not the number of "
             f"{'trainable ' if t_only else ''}parameter scalars."
             + (f" It looks like {why}." if why else ""))


BN_SPEC = [("linear", "fc1", 10, 20, True), ("batchnorm", "bn", 20), ("relu", "act"),
           ("linear", "fc2", 20, 5, True), ("buffer", "mask", [5, 5])]
FROZEN_SPEC = [("container", "backbone"), ("linear", "backbone.fc", 12, 8, True),
               ("layernorm", "backbone.norm", 8), ("linear", "head", 8, 3, False),
               ("freeze", "backbone.fc.weight"), ("freeze", "backbone.fc.bias"),
               ("freeze", "backbone.norm.weight")]
TIED_SPEC = [("embedding", "emb", 50, 16), ("linear", "proj", 16, 16, True),
             ("linear", "head", 16, 50, False), ("tie", "head.weight", "emb.weight")]
TIED_FROZEN_SPEC = [("embedding", "emb", 30, 8), ("linear", "out", 8, 30, True),
                    ("tie", "out.weight", "emb.weight"), ("freeze", "emb.weight")]
DIRECT_SPEC = [("param", "scale", [7]), ("container", "block"), ("param", "block.gain", [3, 4]),
               ("linear", "block.fc", 4, 3, True), ("conv", "conv", 3, 6, 3, True),
               ("buffer", "block.stats", [9])]


# ---------------------------------------------------------------- formulas

def _int_result(value, call):
    check(type(value) is int,
          f"`{call}` should return a Python int, got {type(value).__name__} ({value!r}).")
    return value


@pytest.mark.points(1.5)
def test_linear_param_count(student):
    """linear_param_count with and without bias"""
    for args, kwargs, expected, why in [
        ((3, 4), {}, 16, None),
        ((3, 4), {"bias": False}, 12, "bias=False means no bias vector"),
        ((1, 1), {"bias": True}, 2, None),
        ((784, 10), {}, 7850, None),
        ((5, 7, False), {}, 35, "bias=False means no bias vector"),
        ((9, 2), {"bias": False}, 18, "bias=False means no bias vector"),
    ]:
        shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        call = f"linear_param_count({shown})"
        got = _int_result(student.linear_param_count(*args, **kwargs), call)
        if got != expected:
            d_in, d_out = args[0], args[1]
            hint = ""
            if got == d_in * d_out + d_out and why:
                hint = f" The bias was counted although {why}."
            elif got == d_in * d_out + d_in:
                hint = " nn.Linear has one bias per output feature, not per input feature."
            elif got == d_in * d_out:
                hint = " The bias (one per output feature) is missing."
            fail(f"`{call}` returned {got}, which is not the number of parameters of "
                 f"nn.Linear with those arguments.{hint}")


def _mlp_hint(sizes, got):
    w = sum(a * b for a, b in zip(sizes, sizes[1:]))
    if got == w:
        return " The biases are missing."
    if got == w + sum(sizes):
        return " A bias was counted for the input width too; only layer outputs have biases."
    if got == w + sum(sizes[:-1]):
        return " Biases were counted per layer input; nn.Linear has one bias per output feature."
    return ""


@pytest.mark.points(1)
def test_mlp_param_count(student):
    """mlp_param_count for several widths"""
    for sizes in ([3, 5, 2], [10, 1], [64, 32, 32, 32, 10], [2, 100, 100, 2], [7]):
        expected = sum(a * b + b for a, b in zip(sizes, sizes[1:]))
        call = f"mlp_param_count({sizes})"
        got = _int_result(student.mlp_param_count(sizes), call)
        if got != expected:
            extra = (" With a single width there are no layers." if len(sizes) == 1 else
                     _mlp_hint(sizes, got))
            fail(f"`{call}` returned {got}, which is not the parameter count of the nn.Linear "
                 f"layers between consecutive widths.{extra}")


@pytest.mark.points(0.5)
def test_mlp_param_count_by_formula(student):
    """mlp_param_count works by formula, even for layers far too big to build"""
    sizes = [10 ** 8, 10 ** 8, 10]
    expected = sum(a * b + b for a, b in zip(sizes, sizes[1:]))
    got = _int_result(student.mlp_param_count(sizes), f"mlp_param_count({sizes})")
    check(got == expected,
          f"`mlp_param_count({sizes})` returned {got}, which is not the parameter count."
          + _mlp_hint(sizes, got))


# ---------------------------------------------------------------- count_parameters

@pytest.mark.points(1)
def test_count_excludes_buffers(student, sandbox):
    """count_parameters ignores buffers (BatchNorm running statistics, registered buffers)"""
    label = "Linear(10, 20) -> BatchNorm1d(20) -> ReLU -> Linear(20, 5) plus a registered buffer"
    _check_count(sandbox, BN_SPEC, None, label)
    _check_count(sandbox, BN_SPEC, False, label)


@pytest.mark.points(1.5)
def test_count_frozen(student, sandbox):
    """count_parameters skips frozen parameters only when trainable_only=True (the default)"""
    label = "a model whose backbone Linear and LayerNorm weight are frozen"
    _check_count(sandbox, FROZEN_SPEC, True, label)
    _check_count(sandbox, FROZEN_SPEC, None, label)
    _check_count(sandbox, FROZEN_SPEC, False, label)


@pytest.mark.points(1)
def test_count_tied(student, sandbox):
    """count_parameters counts a tied (shared) parameter once"""
    label = "an Embedding(50, 16) whose weight is tied to the output Linear(16, 50)"
    _check_count(sandbox, TIED_SPEC, True, label)
    _check_count(sandbox, TIED_SPEC, False, label)
    label = "an Embedding(30, 8) tied to Linear(8, 30).weight, with the shared weight frozen"
    _check_count(sandbox, TIED_FROZEN_SPEC, True, label)
    _check_count(sandbox, TIED_FROZEN_SPEC, False, label)


@pytest.mark.points(0.5)
def test_count_direct_parameters(student, sandbox):
    """count_parameters includes parameters registered directly on container modules"""
    label = ("a model with nn.Parameter attributes on the top module and on a nested block, "
             "a Linear and a Conv2d")
    _check_count(sandbox, DIRECT_SPEC, True, label)


# ---------------------------------------------------------------- LayerStack

@pytest.mark.points(1.5)
def test_layerstack_registered(student, sandbox):
    """LayerStack registers all its layers (parameters and state_dict)"""
    for n, w in [(3, 5), (1, 4), (6, 2)]:
        call = f"LayerStack({n}, {w})"
        info = sandbox.probe("stack_info", n, w)
        check(info["is_module"], f"`{call}` is not an nn.Module.")
        if info["linear_count"] == n and not info["registered"]:
            fail(f"`{call}` has its nn.Linear layers in a plain Python list (or dict): nn.Module "
                 "does not see them, so parameters(), state_dict() and .to() miss them. "
                 "Layers must be registered as submodules.")
        if info["linear_uses"] >= n > info["linear_count"] > 0:
            fail(f"`{call}` reuses the same nn.Linear object for several layers, so they "
                 "share one set of weights; each layer needs its own nn.Linear.")
        check(info["linear_count"] == n,
              f"`{call}` contains {info['linear_count']} registered nn.Linear layers, expected {n}.")
        expected_params = n * (w * w + w)
        check(info["n_params"] == expected_params,
              f"`{call}` has {info['n_params']} parameter scalars in parameters(), which is not "
              f"what {n} nn.Linear({w}, {w}) layers hold.")
        shapes = sorted(tuple(s) for s in info["state_dict"].values())
        expected_shapes = sorted([(w, w), (w,)] * n)
        check(shapes == expected_shapes,
              f"`{call}`.state_dict() holds tensors of shapes {shapes}; it should hold the weight "
              f"and bias of each of the {n} layers and nothing else.")


def _reference_stack(weights, biases, x):
    n = len(weights)
    for i in range(n):
        x = x @ weights[i].T + biases[i]
        if i < n - 1:
            x = torch.relu(x)
    return x


@pytest.mark.points(1)
def test_layerstack_forward(student, sandbox):
    """LayerStack applies its layers in order with ReLU between them, none after the last"""
    for n, w, batch, seed in [(3, 6, 5, 7), (1, 3, 4, 8), (4, 4, 6, 9)]:
        g = torch.Generator().manual_seed(seed)
        weights = torch.randn(n, w, w, generator=g) / w ** 0.5
        biases = 0.3 * torch.randn(n, w, generator=g)
        x = torch.randn(batch, w, generator=g)
        expected = _reference_stack(weights, biases, x)
        assert (expected < 0).any(), "grader bug: no negative output to tell ReLU apart"
        info = sandbox.probe("stack_forward", n, w, weights, biases, x)
        call = f"LayerStack({n}, {w})"
        if not info["ok"]:
            fail(f"`{call}` should contain {n} distinct nn.Linear({w}, {w}) layers; found "
                 f"{info['linear_count']} ({info['distinct']} distinct).")
        wrong = {"It looks like ReLU is also applied after the last layer; the output must not "
                 "be clamped.":
                 torch.relu(expected)}
        if n > 1:
            wrong["It looks like the ReLU between the layers is missing."] = _linear_chain(weights, biases, x)
            wrong["It looks like the layers are applied in reverse order."] = _reference_stack(
                weights.flip(0), biases.flip(0), x)
        assert_close(info["out"], expected, rtol=1e-5, atol=1e-5,
                     name=f"the output of {call} (with given weights, for a batch of {batch})",
                     misconceptions=wrong)


def _linear_chain(weights, biases, x):
    for W, b in zip(weights, biases):
        x = x @ W.T + b
    return x


@pytest.mark.points(0.5)
def test_layerstack_to_float64(student, sandbox):
    """LayerStack.to(torch.float64) converts every layer"""
    n, w = 4, 3
    x = torch.randn(2, w, dtype=torch.float64)
    info = sandbox.probe("stack_to", n, w, x)
    call = f"LayerStack({n}, {w}).to(torch.float64)"
    check(info["returns_self"], f"`{call}` did not return the module itself.")
    check(len(info["linear_dtypes"]) > 0, f"`LayerStack({n}, {w})` has no nn.Linear layer.")
    check(len(info["param_dtypes"]) > 0,
          f"`LayerStack({n}, {w})`.parameters() is empty, so .to() has nothing to convert: the "
          "layers are not registered with the module.")
    check(all(d == "torch.float64" for d in info["linear_dtypes"]),
          f"After `{call}`, the layers' weights have dtypes {info['linear_dtypes']}: .to() only "
          "converts what is registered with the module.")
    check(all(d == "torch.float64" for d in info["param_dtypes"]),
          f"After `{call}`, parameters() yields dtypes {info['param_dtypes']}; all should be "
          "float64.")
    check(info["forward_error"] is None,
          f"After `{call}`, calling it on a float64 batch failed: {info['forward_error']}")
    check(info["out_dtype"] == "torch.float64",
          f"After `{call}`, the output on a float64 batch has dtype {info['out_dtype']}.")
