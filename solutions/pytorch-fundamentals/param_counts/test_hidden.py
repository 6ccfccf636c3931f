"""Hidden suite for `param_counts`."""
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from torch import nn

from autograder.judge import StudentError, as_found, assert_close, check, describe, fail

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
    """(count, key, diagnosis) of known-wrong approaches, computed on the judge's copy of the model."""
    keep = lambda p: p.requires_grad or not trainable_only  # noqa: E731
    expected = _count(model, trainable_only)
    n_buffers = sum(b.numel() for b in model.buffers())
    per_module = sum(p.numel() for _, m in model.named_modules()
                     for p in m.parameters(recurse=False) if keep(p))
    in_leaves = {id(p): p for m in model.modules() if not list(m.children()) for p in m.parameters() if keep(p)}
    leaves = sum(p.numel() for p in in_leaves.values())  # each once: only the direct parameters are missed
    out = [
        (expected + n_buffers, "counts_buffers",
         "buffers (such as BatchNorm's running_mean/running_var/num_batches_tracked or register_buffer tensors) "
         "were counted; they are not parameters"),
        (per_module, "tied_twice",
         "a parameter shared by two modules (tied weights) was counted twice; count each distinct parameter once"),
        (leaves, "misses_direct_params",
         "parameters registered directly on a container module (not inside a leaf layer) were missed"),
        (sum(t.numel() for t in model.state_dict().values()), "counts_state_dict",
         "this counts everything in state_dict(), which also holds buffers and lists a tied weight under each of "
         "its names"),
        (sum(1 for p in model.parameters() if keep(p)), "counts_tensors",
         "the parameter tensors were counted, not the scalars they hold (use p.numel())"),
    ]
    out.append((sum(p.numel() for p in model.parameters() if p.requires_grad != trainable_only), "inverted_flag",
                "the test on requires_grad is inverted: " + ("only the frozen parameters were counted" if
                                                             trainable_only else "the frozen parameters were left "
                                                             "out although trainable_only=False")))
    if trainable_only:
        out.append((_count(model, False), "counts_frozen",
                    "frozen parameters (requires_grad=False) were counted although trainable_only=True"))
    return [(v, key, msg) for v, key, msg in out if v != expected]


def _is_int(value):
    return type(value) is int


def _check_count(sandbox, spec, trainable_only, label):
    call = ("count_parameters(model)" if trainable_only is None
            else f"count_parameters(model, trainable_only={trainable_only})")
    got = sandbox.probe("count_probe", spec, trainable_only)
    check(_is_int(got), f"`{call}` for {label} should return a Python int, got {describe(got)}.",
          misconception="not_python_int")
    model = build_model(spec)
    t_only = True if trainable_only is None else trainable_only
    expected = _count(model, t_only)
    if got == expected:
        return
    if trainable_only is None and got == _count(model, False):
        # reached only after the explicit trainable_only=True call was right
        fail(f"`{call}` for {label} returned {got}: the default must be trainable_only=True, but frozen "
             "parameters were counted.", misconception="default_counts_frozen")
    fits = [(key, msg) for v, key, msg in _wrong_counts(model, t_only) if v == got]
    key, why = fits[0] if len(fits) == 1 else ("", None)  # a diagnosis only when one mistake explains it
    if key and not _fits_other_flag(sandbox, spec, model, not t_only, key):
        key, why = "", None  # one number fits it, the same model counted the other way does not: not proven
    fail(f"`{call}` for {label} returned {got}, which is not the number of "
         f"{'trainable ' if t_only else ''}parameter scalars ({expected})."
         + (f" It looks like {why}." if why else ""), misconception=key)


def _fits_other_flag(sandbox, spec, model, flag, key):
    """Whether the student's count of the same model with ``trainable_only=flag`` is what mistake ``key``
    gives there too (or the right count, where that mistake gives it): one matching number is a hint, a
    formula that fits both calls is evidence (issue 44)."""
    got = sandbox.probe("count_probe", spec, flag)
    formula = {k: v for v, k, _ in _wrong_counts(model, flag)}.get(key, _count(model, flag))
    return _is_int(got) and got == formula


# Each spec is built so that every known-wrong count differs from the right one and from the others
# (a buffer next to a tie, a buffer next to a frozen layer), so that a diagnosis is unambiguous.
BN_SPEC = [("linear", "fc1", 10, 20, True), ("batchnorm", "bn", 20), ("relu", "act"),
           ("linear", "fc2", 20, 5, True), ("buffer", "mask", [5, 5]), ("linear", "fc3", 5, 5, False),
           ("linear", "fc4", 5, 5, False), ("tie", "fc4.weight", "fc3.weight")]
FROZEN_SPEC = [("container", "backbone"), ("linear", "backbone.fc", 12, 8, True),
               ("layernorm", "backbone.norm", 8), ("linear", "head", 8, 3, False),
               ("freeze", "backbone.fc.weight"), ("freeze", "backbone.fc.bias"),
               ("freeze", "backbone.norm.weight"), ("buffer", "backbone.ema", [3])]
TIED_SPEC = [("embedding", "emb", 50, 16), ("linear", "proj", 16, 16, True),
             ("linear", "head", 16, 50, False), ("tie", "head.weight", "emb.weight"), ("buffer", "pos", [4])]
TIED_FROZEN_SPEC = [("embedding", "emb", 30, 8), ("linear", "out", 8, 30, True),
                    ("tie", "out.weight", "emb.weight"), ("freeze", "emb.weight")]
DIRECT_SPEC = [("param", "scale", [7]), ("container", "block"), ("param", "block.gain", [3, 4]),
               ("linear", "block.fc", 4, 3, True), ("conv", "conv", 3, 6, 3, True),
               ("buffer", "block.stats", [9])]


# ---------------------------------------------------------------- formulas
GENERATED = settings(derandomize=True, max_examples=12, deadline=None, database=None,
                     phases=[Phase.explicit, Phase.generate], print_blob=False)
BIG = 10 ** 12  # widths far beyond memory: products overflow int64


def _int_result(value, call):
    check(_is_int(value), f"`{call}` should return a Python int, got {describe(value)}.",
          misconception="not_python_int")
    return value


def _linear_expected(d_in, d_out, bias):
    return d_in * d_out + (d_out if bias else 0)


def _check_linear(student, args, kwargs):
    shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    call = f"linear_param_count({shown})"
    bias = kwargs.get("bias", args[2] if len(args) > 2 else True)
    d_in, d_out = args[0], args[1]
    expected = _linear_expected(d_in, d_out, bias)
    got = _int_result(student.linear_param_count(*args, **kwargs), call)
    if got == expected:
        return
    key, hint = "", ""
    if not bias and got == d_in * d_out + d_out:
        key, hint = "ignores_bias_flag", " The bias was counted although bias=False means no bias vector."
    elif bias and d_in != d_out and got == d_in * d_out + d_in:
        key, hint = "bias_per_input", " nn.Linear has one bias per output feature, not per input feature."
    elif bias and got == d_in * d_out:
        key, hint = "no_bias", " The bias (one per output feature) is missing."
    fail(f"`{call}` returned {got}, which is not the number of parameters of nn.Linear with those "
         f"arguments.{hint}", misconception=key)


@pytest.mark.rules("linear_param_count")
@pytest.mark.points(0.5)
def test_linear_param_count(student):
    """linear_param_count with and without bias"""
    for args, kwargs in [((3, 4), {}), ((3, 4), {"bias": False}), ((1, 1), {"bias": True}), ((784, 10), {}),
                         ((5, 7, False), {}), ((9, 2), {"bias": False}), ((2, 9), {"bias": True})]:
        _check_linear(student, args, kwargs)


@pytest.mark.rules("linear_param_count")
@pytest.mark.points(0.5)
def test_linear_param_count_generated(student):
    """linear_param_count on generated widths, huge ones included"""

    @GENERATED
    @given(st.integers(1, BIG), st.integers(1, BIG), st.booleans())
    def run(d_in, d_out, bias):
        _check_linear(student, (d_in, d_out), {"bias": bias})

    run()


def _mlp_expected(sizes):
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def _wrap64(n):
    return (n + 2 ** 63) % 2 ** 64 - 2 ** 63


def _check_mlp(student, sizes, *, diagnose=True):
    expected = _mlp_expected(sizes)
    call = f"mlp_param_count({sizes})"
    try:
        got = student.mlp_param_count(list(sizes))
    except StudentError as e:
        text = str(e).lower()
        if diagnose and max(sizes) >= 10 ** 8 and any(w in text for w in ("alloc", "memory", "overflow")):
            fail(f"`{call}` failed: {str(e).splitlines()[0]} It looks like it builds the layers to count them; "
                 "count by formula instead (nothing needs to be allocated).", misconception="builds_layers")
        raise
    got = _int_result(got, call)
    if got == expected:
        return
    key, hint = "", ""
    if len(sizes) == 1:
        hint = " With a single width there are no layers."
    elif diagnose:
        w = sum(a * b for a, b in zip(sizes, sizes[1:]))
        if got == w:
            key, hint = "mlp_no_biases", " The biases are missing."
        elif got == w + sum(sizes):
            key, hint = "mlp_bias_every_width", (" A bias was counted for the input width too; only layer outputs "
                                                 "have biases.")
        elif got == w + sum(sizes[:-1]) and sizes[:-1] != sizes[1:]:
            key, hint = "bias_per_input", " Biases were counted per layer input; nn.Linear has one per output."
        elif expected > 2 ** 63 - 1 and got == _wrap64(expected):
            key, hint = "int64_overflow", (" The count overflowed 64-bit integer arithmetic (NumPy or torch int64 "
                                           "wraps around silently); Python ints never overflow.")
    fail(f"`{call}` returned {got}, which is not the parameter count of the nn.Linear layers between "
         f"consecutive widths.{hint}", misconception=key)


@pytest.mark.rules("mlp_param_count")
@pytest.mark.points(1)
def test_mlp_param_count(student):
    """mlp_param_count for several widths"""
    for sizes in ([3, 5, 2], [10, 1], [64, 32, 32, 32, 10], [2, 100, 100, 2], [7], [4, 9, 6]):
        _check_mlp(student, sizes)


@pytest.mark.rules("mlp_param_count")
@pytest.mark.points(0.5)
def test_mlp_param_count_by_formula(student):
    """mlp_param_count works by formula, even for widths far too big to build (and beyond int64)"""
    _check_mlp(student, [10 ** 10, 10 ** 10, 3])


@pytest.mark.rules("mlp_param_count")
@pytest.mark.points(0.5)
def test_mlp_param_count_generated(student):
    """mlp_param_count on generated width lists"""

    @GENERATED
    @given(st.lists(st.integers(1, BIG), min_size=1, max_size=6))
    def run(sizes):
        _check_mlp(student, sizes, diagnose=False)

    run()


# ---------------------------------------------------------------- count_parameters

@pytest.mark.rules("count_parameters")
@pytest.mark.points(0.5)
def test_count_excludes_buffers(student, sandbox):
    """count_parameters ignores buffers (BatchNorm running statistics, registered buffers)"""
    label = "Linear(10, 20) -> BatchNorm1d(20) -> ReLU -> Linear(20, 5) plus a registered buffer"
    _check_count(sandbox, BN_SPEC, None, label)
    _check_count(sandbox, BN_SPEC, False, label)


@pytest.mark.rules("count_parameters")
@pytest.mark.points(1)
def test_count_frozen(student, sandbox):
    """count_parameters skips frozen parameters only when trainable_only=True (the default)"""
    label = "a model whose backbone Linear and LayerNorm weight are frozen"
    _check_count(sandbox, FROZEN_SPEC, True, label)
    _check_count(sandbox, FROZEN_SPEC, None, label)
    _check_count(sandbox, FROZEN_SPEC, False, label)


@pytest.mark.rules("count_parameters")
@pytest.mark.points(1)
def test_count_tied(student, sandbox):
    """count_parameters counts a tied (shared) parameter once"""
    label = "an Embedding(50, 16) whose weight is tied to the output Linear(16, 50)"
    _check_count(sandbox, TIED_SPEC, True, label)
    _check_count(sandbox, TIED_SPEC, False, label)
    label = "an Embedding(30, 8) tied to Linear(8, 30).weight, with the shared weight frozen"
    _check_count(sandbox, TIED_FROZEN_SPEC, True, label)
    _check_count(sandbox, TIED_FROZEN_SPEC, False, label)


@pytest.mark.rules("count_parameters")
@pytest.mark.points(0.5)
def test_count_direct_parameters(student, sandbox):
    """count_parameters includes parameters registered directly on container modules"""
    label = ("a model with nn.Parameter attributes on the top module and on a nested block, "
             "a Linear and a Conv2d")
    _check_count(sandbox, DIRECT_SPEC, True, label)


@st.composite
def model_specs(draw):
    """A model: Linear layers (some in a container), maybe BatchNorm, a direct parameter, a buffer, a tied
    layer, and some frozen parameters."""
    spec, params = [], []
    inner = draw(st.booleans())
    if inner:
        spec.append(("container", "blk"))
    for i in range(draw(st.integers(1, 3))):
        a, b, bias = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.booleans())
        path = f"blk.l{i}" if inner and i % 2 else f"l{i}"
        spec.append(("linear", path, a, b, bias))
        params += [f"{path}.weight"] + ([f"{path}.bias"] if bias else [])
    if draw(st.booleans()):
        spec.append(("batchnorm", "bn", draw(st.integers(1, 6))))
        params += ["bn.weight", "bn.bias"]
    if draw(st.booleans()):
        spec.append(("param", "blk.gain" if inner else "gain", [draw(st.integers(1, 5))]))
        params.append("blk.gain" if inner else "gain")
    if draw(st.booleans()):
        spec.append(("buffer", "stat", [draw(st.integers(1, 5))]))
    if draw(st.booleans()):
        _, path, a, b, _ = next(op for op in spec if op[0] == "linear")
        spec += [("linear", "tied", a, b, False), ("tie", "tied.weight", f"{path}.weight")]
    for name in draw(st.lists(st.sampled_from(params), max_size=3, unique=True)):
        spec.append(("freeze", name))
    return spec


@pytest.mark.rules("count_parameters")
@pytest.mark.points(1)
def test_count_generated(student, sandbox):
    """count_parameters on generated models (containers, BatchNorm, ties, frozen parameters)"""

    @GENERATED
    @given(model_specs(), st.booleans())
    def run(spec, trainable_only):
        got = sandbox.probe("count_probe", spec, trainable_only)
        call = f"count_parameters(model, trainable_only={trainable_only})"
        check(_is_int(got), f"`{call}` should return a Python int, got {describe(got)}.",
              misconception="not_python_int")
        expected = _count(build_model(spec), trainable_only)
        shown = "; ".join(" ".join(map(str, op)) for op in spec)
        check(got == expected, f"`{call}` returned {got} for a model built as [{shown}]; it has {expected} "
                               f"{'trainable ' if trainable_only else ''}parameter scalars.")

    run()


# ---------------------------------------------------------------- LayerStack

@pytest.mark.rules("layer_stack")
@pytest.mark.points(1)
def test_layerstack_registered(student, sandbox):
    """LayerStack registers all its layers (parameters and state_dict)"""
    for n, w in [(3, 5), (1, 4), (6, 2)]:
        call = f"LayerStack({n}, {w})"
        info = sandbox.probe("stack_info", n, w)
        check(info["is_module"], f"`{call}` is not an nn.Module.")
        if info["linear_count"] == n and not info["registered"]:
            fail(f"`{call}` has its nn.Linear layers in a plain Python list (or dict): nn.Module "
                 "does not see them, so parameters(), state_dict() and .to() miss them. "
                 "Layers must be registered as submodules.", misconception="unregistered_layers")
        if info["linear_uses"] >= n > info["linear_count"] > 0:
            fail(f"`{call}` reuses the same nn.Linear object for several layers, so they "
                 "share one set of weights; each layer needs its own nn.Linear.", misconception="shared_layer")
        if info["linear_count"] == n + 1:
            fail(f"`{call}` contains {n + 1} registered nn.Linear layers, expected {n}: n_layers is the number of "
                 "Linear layers, not of hidden layers.", misconception="extra_layer")
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


@pytest.mark.rules("layer_stack")
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
            key = ("extra_layer" if info["linear_count"] == n + 1 == info["distinct"] else
                   "shared_layer" if info["linear_count"] == n and info["distinct"] < n else "")
            fail(f"`{call}` should contain {n} distinct nn.Linear({w}, {w}) layers; found "
                 f"{info['linear_count']} ({info['distinct']} distinct).", misconception=key)
        wrong = {"relu_after_last": ("It looks like ReLU is also applied after the last layer; the output must "
                                     "not be clamped.", torch.relu(expected))}
        if n > 1:
            wrong["no_relu"] = ("It looks like the ReLU between the layers is missing.",
                                _linear_chain(weights, biases, x))
            wrong["reversed_layers"] = ("It looks like the layers are applied in reverse order.",
                                        _reference_stack(weights.flip(0), biases.flip(0), x))
        assert_close(info["out"], expected, rtol=1e-5, atol=1e-5,
                     name=f"the output of {call} (with given weights, for a batch of {batch})",
                     misconceptions=wrong)


def _linear_chain(weights, biases, x):
    for W, b in zip(weights, biases):
        x = x @ W.T + b
    return x


@pytest.mark.rules("layer_stack")
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
          "layers are not registered with the module.", misconception="unregistered_layers")
    check(all(d == "torch.float64" for d in info["linear_dtypes"]),
          f"After `{call}`, the layers' weights have dtypes {info['linear_dtypes']}: .to() only "
          "converts what is registered with the module.", misconception="unregistered_layers")
    check(all(d == "torch.float64" for d in info["param_dtypes"]),
          f"After `{call}`, parameters() yields dtypes {info['param_dtypes']}; all should be "
          "float64.")
    check(info["forward_error"] is None,
          f"After `{call}`, calling it on a float64 batch failed: {info['forward_error']}")
    check(info["out_dtype"] == "torch.float64",
          f"After `{call}`, the output on a float64 batch has dtype {info['out_dtype']}.")


# ---------------------------------------------------------------- the conventions

@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_functions_leave_inputs_and_settings_as_found(student, sandbox):
    """count_parameters leaves the model as found (weights, modes, requires_grad); nothing changes torch's settings"""
    nn_ = {name: sandbox.ref(f"torch.nn.{name}") for name in ("Sequential", "Linear", "BatchNorm1d", "ReLU")}

    @GENERATED
    @given(st.lists(st.integers(1, 6), min_size=2, max_size=4), st.booleans(), st.booleans(), st.booleans())
    def run(widths, batchnorm, train, frozen):
        layers = []
        for i, (a, b) in enumerate(zip(widths, widths[1:])):
            layers.append(nn_["Linear"](a, b))
            if batchnorm and i == 0:
                layers.append(nn_["BatchNorm1d"](b))
            layers.append(nn_["ReLU"]())
        model = nn_["Sequential"](*layers)
        model.train(train)
        if frozen:
            sandbox.ref("torch.nn.Module.requires_grad_")(layers[0], False)
        shown = (f"a Sequential of Linear layers of widths {widths}" + (" with a BatchNorm1d" if batchnorm else "")
                 + f" in {'train' if train else 'eval'} mode" + (", its first Linear frozen" if frozen else ""))
        for only in (True, False):
            as_found(sandbox, student.count_parameters, model, trainable_only=only, names=["model"],
                     call=f"count_parameters(model, trainable_only={only}) for {shown}")
        as_found(sandbox, student.LayerStack, len(widths), widths[0], call=f"LayerStack({len(widths)}, {widths[0]})")
        as_found(sandbox, student.linear_param_count, widths[0], widths[1], call=f"linear_param_count({widths[0]}, "
                                                                                 f"{widths[1]})")
        as_found(sandbox, student.mlp_param_count, widths, call=f"mlp_param_count({widths})")

    run()
