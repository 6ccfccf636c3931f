"""Hidden suite for compile (contract section 9).

What is decided in the judge: every output value (compared with ChattyMLP's
function computed here, in float64, from the same weights), and all counts.
Those value tests carry 9 of the 10 points: CompileFriendlyMLP's eager outputs
(fixed and generated sizes) and compile_dynamic's outputs for every batch size.

What rests on facts measured in the sandbox (see probes.py):
1. whether torch.compile(..., fullgraph=True) raised for CompileFriendlyMLP,
   and how many graphs the probe's own counting backend received / executed;
2. whether the compile_dynamic callable raised a recompilation error under
   torch.compiler.set_stance("fail_on_recompile");
3. how many times dynamo traced the probe's model (comptime counter).
Student code shares the sandbox process with the probes and can rewrite any
of this (forged code objects, dynamo's state), so these four tests are
advice (`in_process`, 0 points: issue 43): a forger gains nothing; their
point went to the dynamic values. The probes still fail closed: the hook points are captured before the
first cell and must be torch's own code at each experiment, and dynamo's
graph-break settings are reset to the defaults for the capture.
"""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from autograder.judge import as_found, check, describe, fail

GENERATED = settings(derandomize=True, max_examples=8, deadline=None, database=None,
                     phases=[Phase.explicit, Phase.generate], print_blob=False)
CHATTY_KEYS = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")

DIMS = (5, 12, 3)
RTOL, ATOL = 1e-4, 1e-4


def _weights(seed=909):
    g = torch.Generator().manual_seed(seed)
    d_in, d_h, d_out = DIMS
    return {
        "fc1.weight": torch.randn(d_h, d_in, generator=g) * 0.8,
        "fc1.bias": torch.randn(d_h, generator=g) * 0.5,
        "fc2.weight": torch.randn(d_out, d_h, generator=g) * 0.4,
        "fc2.bias": torch.randn(d_out, generator=g) * 0.1,
    }


def _inputs(seed=919, n=16):
    g = torch.Generator().manual_seed(seed)
    big = torch.randn(n, DIMS[0], generator=g) * 4.0     # several activations above 6
    small = torch.randn(n, DIMS[0], generator=g) * 0.2   # none above 6
    return [big, small]


def _chatty(sd, x, clamp=True):
    """ChattyMLP's function, in float64 (the judge's trusted copy)."""
    sd = {k: v.double() for k, v in sd.items()}
    h = torch.relu(F.linear(x.double(), sd["fc1.weight"], sd["fc1.bias"]))
    if clamp and h.max().item() > 6.0:
        h = h.clamp(max=6.0)
    return F.linear(h, sd["fc2.weight"], sd["fc2.bias"])


def _device(sandbox):
    return "cuda" if (sandbox.probe("cuda_available") and torch.cuda.is_available()) else "cpu"


def _compare(outs, xs, sd, what):
    check(isinstance(outs, list) and len(outs) == len(xs),
          f"{what}: expected {len(xs)} outputs, got {outs!r:.80}")
    for i, (out, x) in enumerate(zip(outs, xs)):
        check(isinstance(out, torch.Tensor),
              f"{what}: the model returned a {type(out).__name__}, expected a tensor.")
        expected = _chatty(sd, x)
        check(tuple(out.shape) == tuple(expected.shape),
              f"{what}: output shape {tuple(out.shape)}, expected {tuple(expected.shape)}.")
        check(out.dtype == torch.float32,
              f"{what}: output dtype {out.dtype}, expected torch.float32 (the input's dtype).")
        if torch.allclose(out.double(), expected, rtol=RTOL, atol=ATOL):
            continue
        unclamped = _chatty(sd, x, clamp=False)
        err = (out.double() - expected).abs().max().item()
        # a cause only where the outputs fit that formula and not the other one's (issue 44)
        no_clamp = torch.allclose(out.double(), unclamped, rtol=RTOL, atol=ATOL)
        capped = torch.allclose(out.double(), unclamped.clamp(max=6.0), rtol=RTOL, atol=ATOL)
        if no_clamp and not capped:
            fail(f"{what}: on a batch where some hidden activations exceed 6 your output "
                 f"differs from ChattyMLP's (max abs error {err:.3g}). It matches an MLP "
                 f"without the clamp: the `if` block in ChattyMLP is not just logging, it "
                 f"changes the activations, and that effect must be kept without the branch.",
                 misconception="dropped_clamp")
        if capped and not no_clamp:
            fail(f"{what}: your output differs from ChattyMLP's (max abs error {err:.3g}); it matches "
                 f"clamping the output at 6. ChattyMLP caps the hidden activations (after fc1 and the ReLU), "
                 f"not the logits.", misconception="clamp_output")
        fail(f"{what}: the output differs from ChattyMLP's with the same weights "
             f"(max abs error {err:.3g} on input batch {i}).")


def _fullgraph(sandbox):
    # (the probe runs the experiment once per sandbox and replays its result)
    return sandbox.probe("fullgraph_capture", list(DIMS), _weights(), _inputs(),
                         _device(sandbox))


def _dynamic_inputs():
    g = torch.Generator().manual_seed(929)
    return [torch.randn(b, DIMS[0], generator=g) for b in (8, 16, 32, 64)]


def _dynamic(sandbox):
    return sandbox.probe("dynamic_batches", list(DIMS), _weights(4242), _dynamic_inputs(),
                         _device(sandbox), _weights(4343))


def _check_status(res, what):
    if res["status"] == "tampered":
        fail(f"{what}: your notebook replaced {', '.join(res['names'])}; the grader needs "
             f"PyTorch's own functions. Do not rebind torch.compile or torch._dynamo "
             f"functions in your code.", misconception="tampers_compile")
    if res["status"] == "layout":
        detail = res["detail"]
        keys = detail["keys"] if isinstance(detail, dict) else []
        message = detail["message"] if isinstance(detail, dict) else str(detail)
        extra = sorted(set(keys) - set(CHATTY_KEYS))
        renamed = not set(CHATTY_KEYS) <= set(keys)
        fail(f"{what}: `load_state_dict(chatty.state_dict())` (strict) failed: {message}. Its state_dict has "
             f"the keys {keys}, ChattyMLP's has {list(CHATTY_KEYS)}. "
             + ("Keep ChattyMLP's layer names (fc1 then fc2, two nn.Linear) so that its weights load by name."
                if renamed else
                f"It holds extra state ({', '.join(extra)}) that ChattyMLP's state_dict cannot fill: keep a "
                f"constant as a Python number (or a non-persistent buffer)."),
             misconception="renamed_layers" if renamed else "extra_state")


@pytest.mark.rules("same_function")
@pytest.mark.points(4)
def test_same_function_as_chatty(sandbox):
    """CompileFriendlyMLP computes the same function as ChattyMLP"""
    sd, xs = _weights(), _inputs()
    res = sandbox.probe("eager_outputs", list(DIMS), sd, xs)
    _check_status(res, "CompileFriendlyMLP")
    _compare(res["outs"], xs, sd, "CompileFriendlyMLP (eager, ChattyMLP's weights loaded)")


@pytest.mark.rules("fullgraph")
@pytest.mark.points(0)
@pytest.mark.in_process
@pytest.mark.timeout(120)
def test_fullgraph_capture(sandbox):
    """CompileFriendlyMLP compiles with fullgraph=True (no graph break)"""
    res = _fullgraph(sandbox)
    _check_status(res, "torch.compile(CompileFriendlyMLP, fullgraph=True)")
    if res["status"] == "error":
        code = res.get("code") or ""
        where = f" at this line of your code: `{code}`" if code else ""
        reason = f"{res['type']}: {res['message']}"
        text = (code + " " + res["message"]).lower()
        key = ""
        if "print" in code.lower() or "print" in res["message"].lower():
            key, why = "print_in_forward", ("print cannot be traced: it is a graph break. Leave logging out of "
                                            "forward.")
        elif "data-dependent branching" in text:
            key, why = "tensor_branch", ("A Python `if` whose condition depends on tensor values cannot be "
                                         "traced. Make the computation branchless with tensor operations "
                                         "(clamp, torch.where).")
        elif ".item()" in code or "item" in res["message"].lower() or "could not guard on data-dependent" in text:
            key, why = "item_branch", ("Reading a number out of a tensor with .item() (and branching on it in "
                                       "Python) cannot be traced. Make the computation branchless with tensor "
                                       "operations.")
        else:
            why = ("With fullgraph=True any graph break is an error; express the forward "
                   "with tensor operations only.")
        fail(f"torch.compile(model, fullgraph=True) failed on CompileFriendlyMLP{where} "
             f"({reason[:200]}). {why}", misconception=key)
    check(res["graphs"] == 1,
          f"The compiler backend received {res['graphs']} graphs for two calls with the "
          f"same input shape; expected exactly one graph.")
    check(res["ops"][0] > 0,
          "The captured graph contains no operations: the forward's computation must be "
          "traced by torch.compile, not hidden from it.")


@pytest.mark.rules("fullgraph", "same_function")
@pytest.mark.points(0)
@pytest.mark.in_process
@pytest.mark.timeout(120)
def test_compiled_output(sandbox):
    """The fully captured graph runs and gives ChattyMLP's outputs"""
    res = _fullgraph(sandbox)
    _check_status(res, "torch.compile(CompileFriendlyMLP, fullgraph=True)")
    check(res["status"] == "ok",
          "The model could not be compiled with fullgraph=True (see the capture test), "
          "so its compiled output could not be checked.")
    check(res["runs"] == 2,
          f"The compiled model was called twice but the captured graph ran "
          f"{res['runs']} time(s): the computation must happen inside the compiled graph.")
    _compare(res["outs"], _inputs(), _weights(), "Compiled CompileFriendlyMLP")


@pytest.mark.rules("compile_dynamic")
@pytest.mark.points(0)
@pytest.mark.in_process
@pytest.mark.timeout(180)
def test_dynamic_no_recompile(sandbox):
    """compile_dynamic compiles once and survives batch sizes 8, 16, 32, 64"""
    res = _dynamic(sandbox)
    _check_status(res, "compile_dynamic")
    check(res["traces"] >= 1,
          "compile_dynamic(model) returned something that never compiled the model: "
          "dynamo did not trace its forward at all. Return the result of torch.compile.",
          misconception="not_compiled")
    check(res["recompiled_at"] is None,
          f"The callable returned by compile_dynamic recompiled when the batch size went "
          f"from 8 to {res['recompiled_at']} (torch.compiler.set_stance(\"fail_on_recompile\") "
          f"raised: {res['message']}). By default torch.compile specializes on the first "
          f"input's shapes; ask for a dynamic batch dimension.", misconception="recompiles")


@pytest.mark.rules("compile_dynamic")
@pytest.mark.points(0)
@pytest.mark.in_process
@pytest.mark.timeout(180)
def test_dynamic_single_trace(sandbox):
    """compile_dynamic traces the model once for batch sizes 8, 16, 32, 64"""
    res = _dynamic(sandbox)
    _check_status(res, "compile_dynamic")
    check(res["traces"] == 1,
          f"Dynamo traced the model {res['traces']} time(s) for batch sizes 8, 16, 32 and "
          f"64; a dynamic-shape compile traces it exactly once.")


@pytest.mark.rules("compile_dynamic")
@pytest.mark.points(3)
@pytest.mark.timeout(180)
def test_dynamic_values(sandbox):
    """compile_dynamic's callable returns the model's outputs for every batch size"""
    res = _dynamic(sandbox)
    _check_status(res, "compile_dynamic")
    xs = _dynamic_inputs()
    check(isinstance(res["outs"], list) and len(res["outs"]) == len(xs),
          f"Expected outputs for {len(xs)} batch sizes, got {describe(res['outs'])}.")
    sd = _weights(4242)
    sd64 = {k: v.double() for k, v in sd.items()}
    for out, x in zip(res["outs"], xs):
        expected = F.linear(torch.relu(F.linear(x.double(), sd64["fc1.weight"], sd64["fc1.bias"])),
                            sd64["fc2.weight"], sd64["fc2.bias"])
        check(isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(expected.shape),
              f"For a batch of {x.shape[0]} the compiled model returned "
              f"{getattr(out, 'shape', type(out).__name__)}, expected shape {tuple(expected.shape)}.")
        check(torch.allclose(out.double(), expected, rtol=RTOL, atol=ATOL),
              f"For a batch of {x.shape[0]} the compiled model's output differs from the "
              f"model's own output (max abs error "
              f"{(out.double() - expected).abs().max().item():.3g}).")
    # the model's weights change after compiling (as training changes them): the callable follows the model
    x = xs[0]
    sd = {k: v.double() for k, v in _weights(4343).items()}
    expected = F.linear(torch.relu(F.linear(x.double(), sd["fc1.weight"], sd["fc1.bias"])), sd["fc2.weight"],
                        sd["fc2.bias"])
    after = res.get("after")
    check(isinstance(after, torch.Tensor) and tuple(after.shape) == tuple(expected.shape)
          and torch.allclose(after.double(), expected, rtol=RTOL, atol=ATOL),
          f"After the model's weights were changed in place (as training does) once compile_dynamic(model) had "
          f"returned, the compiled callable's output for a batch of {x.shape[0]} is not the model's new output"
          + (f" (max abs error {(after.double() - expected).abs().max().item():.3g})"
             if isinstance(after, torch.Tensor) and after.shape == expected.shape else "")
          + ": it must compute with the caller's model itself, not with a copy of it.")


@pytest.mark.rules("same_function")
@pytest.mark.points(2.5)
@pytest.mark.timeout(60)
def test_same_function_generated(sandbox):
    """CompileFriendlyMLP equals ChattyMLP on generated sizes, weights and inputs"""

    @GENERATED
    @given(st.integers(1, 7), st.integers(1, 9), st.integers(1, 4), st.integers(1, 6),
           st.sampled_from([0.1, 1.0, 5.0]), st.integers(0, 2 ** 16))
    def run(d_in, d_h, d_out, n, scale, seed):
        g = torch.Generator().manual_seed(seed)
        sd = {"fc1.weight": torch.randn(d_h, d_in, generator=g), "fc1.bias": torch.randn(d_h, generator=g),
              "fc2.weight": torch.randn(d_out, d_h, generator=g) * 0.5, "fc2.bias": torch.randn(d_out, generator=g)}
        xs = [torch.randn(n, d_in, generator=g) * scale]
        res = sandbox.probe("eager_outputs", [d_in, d_h, d_out], sd, xs)
        _check_status(res, f"CompileFriendlyMLP({d_in}, {d_h}, {d_out})")
        _compare(res["outs"], xs, sd, f"CompileFriendlyMLP({d_in}, {d_h}, {d_out}) with ChattyMLP's weights, "
                                      f"a batch of {n}")

    run()


# ---------------------------------------------------------------- the conventions

@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_leaves_model_and_settings_as_found(student, sandbox):
    """compile_dynamic leaves the model (weights, mode) and torch's settings as found; so does the constructor"""
    nn_ = {name: sandbox.ref(f"torch.nn.{name}") for name in ("Sequential", "Linear", "ReLU")}

    @GENERATED
    @given(st.integers(1, 6), st.integers(1, 8), st.integers(1, 4), st.booleans())
    def run(d_in, d_h, d_out, train):
        shown = f"({d_in}, {d_h}, {d_out})"
        as_found(sandbox, student.CompileFriendlyMLP, d_in, d_h, d_out, call=f"CompileFriendlyMLP{shown}")
        model = nn_["Sequential"](nn_["Linear"](d_in, d_h), nn_["ReLU"](), nn_["Linear"](d_h, d_out))
        model.train(train)
        as_found(sandbox, student.compile_dynamic, model, names=["model"],
                 call=f"compile_dynamic(model) for a Sequential of Linear{shown[:-1]}) layers in "
                      f"{'train' if train else 'eval'} mode")

    run()
