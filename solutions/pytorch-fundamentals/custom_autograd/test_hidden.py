"""Hidden suite for custom_autograd (contract section 10).

Every expected value is computed here: rounding and cubes with torch, the
backward of Cube against 3 x^2 * g and against finite differences of the
student's own forward values taken in the judge (autograder.judge.gradcheck),
second derivatives against closed forms. The student's own gradcheck is never
trusted; the sandbox only runs the student's Functions (probes.py). Values for
finite differences come through the same call path as the gradients (an input
that requires grad), and are themselves checked against x ** 3, so a Function
that computes something else when ctx.needs_input_grad is False gains nothing.
"""
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from autograder.judge import StudentError, as_found, assert_close, check, fail, gradcheck

GENERATED = settings(derandomize=True, max_examples=10, deadline=None, database=None,
                     phases=[Phase.explicit, Phase.generate], print_blob=False)


def _rounding_misconceptions(x):
    return {
        "truncates": ("This is truncation toward zero (what .long() or .int() does), not rounding to the nearest "
                      "integer.", torch.trunc(x)),
        "floor": ("This is floor, not rounding to the nearest integer.", torch.floor(x)),
        "round_half_up": ("Ties (x.5) went up, as floor(x + 0.5) does; torch.round sends a tie to the even "
                          "neighbour (0.5 -> 0, 1.5 -> 2, -2.5 -> -2).", torch.floor(x + 0.5)),
        "round_half_away": ("Ties (x.5) went away from zero (schoolbook rounding); torch.round sends a tie to the "
                            "even neighbour (0.5 -> 0, 1.5 -> 2, -2.5 -> -2).",
                            torch.sign(x) * torch.floor(x.abs() + 0.5)),
    }


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _off_half(x):
    """Move values away from .5 ties, where rounding conventions differ."""
    frac = x - torch.floor(x)
    return torch.where((frac - 0.5).abs() < 0.05, x + 0.2, x)


# ---------------------------------------------------------------- StraightThroughRound

@pytest.mark.rules("ste_forward", "inputs_unmodified")
@pytest.mark.points(0.5)
def test_ste_forward_rounds(sandbox):
    """StraightThroughRound's forward rounds to the nearest integer, keeping the dtype"""
    for dtype in (torch.float64, torch.float32):
        x = _off_half(torch.randn(4, 5, generator=_gen(11), dtype=torch.float64) * 3).to(dtype)
        res = sandbox.probe("apply_with_grad", "StraightThroughRound", x, torch.ones_like(x))
        assert_close(res["y"], torch.round(x), rtol=0, atol=0,
                     name=f"StraightThroughRound.apply(x) for a {dtype} x",
                     misconceptions=lambda x=x: _rounding_misconceptions(x))
        check(torch.equal(res["input_after"], x),
              f"StraightThroughRound.apply(x) changed the values of the caller's x (a {dtype} tensor): a function "
              "must not modify its input in place; return a new tensor.")


TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5, 4.5, 0.49, -0.51, 7.0]


@pytest.mark.rules("ste_forward")
@pytest.mark.points(0.5)
def test_ste_forward_ties_to_even(sandbox):
    """StraightThroughRound's forward is torch.round: ties (x.5) go to the even neighbour"""
    for dtype in (torch.float64, torch.float32):
        x = torch.tensor(TIES, dtype=dtype)
        res = sandbox.probe("apply_with_grad", "StraightThroughRound", x, torch.ones_like(x))
        assert_close(res["y"], torch.round(x), rtol=0, atol=0,
                     name=f"StraightThroughRound.apply(x) for x = {TIES} ({dtype})",
                     misconceptions=lambda x=x: _rounding_misconceptions(x))


@pytest.mark.rules("ste_backward")
@pytest.mark.points(1.5)
def test_ste_backward_passes_upstream(sandbox):
    """StraightThroughRound's backward passes the upstream gradient through unchanged"""
    x = _off_half(torch.randn(3, 4, generator=_gen(12), dtype=torch.float64) * 2)
    g = torch.randn(3, 4, generator=_gen(13), dtype=torch.float64) * 5 + 1
    res = sandbox.probe("apply_with_grad", "StraightThroughRound", x, g)
    check(res["grad"] is not None,
          "Backpropagating through StraightThroughRound gave no gradient for its input: "
          "backward must return a tensor (the upstream gradient), not None.")
    assert_close(res["grad"], g, rtol=0, atol=0,
                 name="the gradient through StraightThroughRound (upstream gradient g, not ones)",
                 misconceptions={
                     "ste_ignores_upstream": ("It is all ones: backward must return the upstream gradient it "
                                              "receives (grad_output), not the local derivative 1.",
                                              torch.ones_like(g)),
                     "ste_zero_grad": ("It is all zeros, the true derivative of rounding: the straight-through "
                                       "estimator instead pretends round was the identity.", torch.zeros_like(g)),
                 })
    x32, g32 = x.float(), g.float()
    res32 = sandbox.probe("apply_with_grad", "StraightThroughRound", x32, g32)
    assert_close(res32["grad"], g32, rtol=0, atol=0,
                 name="the float32 gradient through StraightThroughRound")


@pytest.mark.rules("ste_backward")
@pytest.mark.points(0.5)
def test_ste_inside_a_graph(sandbox):
    """StraightThroughRound works in the middle of a computation"""
    x = torch.randn(6, generator=_gen(14), dtype=torch.float64)
    w = torch.randn(6, generator=_gen(15), dtype=torch.float64) * 3
    c = torch.randn(6, generator=_gen(16), dtype=torch.float64)
    gw = sandbox.probe("ste_in_graph", x, w, c)
    check(gw is not None, "No gradient reached w through StraightThroughRound.")
    assert_close(gw, c * x, rtol=1e-12, atol=1e-12,
                 name="the gradient d/dw of sum(c * StraightThroughRound.apply(w * x))",
                 hint="With a straight-through backward, the gradient flows to w exactly as "
                      "if the rounding were not there.")


# ---------------------------------------------------------------- Cube

@pytest.mark.rules("cube")
@pytest.mark.points(0.5)
def test_cube_forward(sandbox):
    """Cube's forward computes x ** 3, keeping the dtype"""
    x = torch.randn(3, 4, generator=_gen(21), dtype=torch.float64) * 2
    res = sandbox.probe("apply_with_grad", "Cube", x, torch.ones_like(x))
    assert_close(res["y"], x ** 3, rtol=1e-12, atol=1e-12, name="Cube.apply(x) (float64)")
    x32 = x.float()
    res32 = sandbox.probe("apply_with_grad", "Cube", x32, torch.ones_like(x32))
    assert_close(res32["y"], x32 ** 3, rtol=1e-6, atol=1e-6, name="Cube.apply(x) (float32)")


@pytest.mark.rules("cube")
@pytest.mark.points(1.5)
def test_cube_backward_values(sandbox):
    """Cube's backward returns 3 x^2 times the upstream gradient"""
    x = torch.randn(2, 5, generator=_gen(22), dtype=torch.float64) * 1.5
    g = torch.randn(2, 5, generator=_gen(23), dtype=torch.float64) * 3 + 0.5
    res = sandbox.probe("apply_with_grad", "Cube", x, g)
    check(res["grad"] is not None,
          "Backpropagating through Cube gave no gradient for its input: backward must "
          "return a tensor.")
    assert_close(res["grad"], 3 * x ** 2 * g, rtol=1e-10, atol=1e-12,
                 name="the gradient through Cube for upstream gradient g",
                 misconceptions=lambda: _cube_misconceptions(x, g))
    x32, g32 = x.float(), g.float()
    res32 = sandbox.probe("apply_with_grad", "Cube", x32, g32)
    assert_close(res32["grad"], 3 * x32 ** 2 * g32, rtol=1e-5, atol=1e-5,
                 name="the float32 gradient through Cube", misconceptions=lambda: _cube_misconceptions(x32, g32))


def _cube_misconceptions(x, g):
    return {
        "cube_ignores_upstream": ("It equals 3 x^2 alone: backward must multiply the local derivative by the "
                                  "upstream gradient grad_output (chain rule).", 3 * x ** 2),
        "cube_uses_output": ("It equals 3 y^2 * g with y = x^3: the derivative needs the input x, so save the "
                             "input (not the output) in forward.", 3 * (x ** 3) ** 2 * g),
        "cube_forward_in_backward": ("It equals x^3 * g: that is the forward value, not the derivative.",
                                     x ** 3 * g),
        "cube_root_of_output": ("It equals 3 y^(2/3) * g with y = x^3: recovering x^2 from the output as a "
                                "fractional power gives NaN wherever x is negative (a negative number has no "
                                "real fractional power in torch.pow); save the input x in forward instead.",
                                3 * (x ** 3) ** (2 / 3) * g),
    }


@pytest.mark.rules("cube")
@pytest.mark.points(1)
@pytest.mark.timeout(60)
def test_cube_matches_finite_differences(sandbox):
    """Cube's backward agrees with finite differences of its forward (computed by the grader)"""
    x = torch.randn(10, generator=_gen(24), dtype=torch.float64)
    g = torch.randn(10, generator=_gen(25), dtype=torch.float64)
    res = sandbox.probe("apply_with_grad", "Cube", x, g)
    check(res["grad"] is not None, "Backpropagating through Cube gave no gradient.")
    # the values differentiated below come from the same call as the gradient (x requires grad);
    # they must be x ** 3 there too, or the finite differences would check some other function
    assert_close(sandbox.probe("forward_values", "Cube", x), x ** 3, rtol=1e-12, atol=1e-12,
                 name="Cube.apply(x) for an x that requires grad")

    def loss(xs):
        return (sandbox.probe("forward_values", "Cube", xs) * g).sum()

    gradcheck(loss, [x], [res["grad"]], eps=1e-6, atol=1e-6, rtol=1e-5,
              name="the gradient through Cube")


@pytest.mark.rules("cube")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_cube_is_a_custom_function(sandbox):
    """Cube is a torch.autograd.Function whose own backward is used (advice: 0 points)"""
    # A class's bases and a graph node's type exist only in the student's process: advice, worth nothing
    # (issue 43); Cube's values and gradients on the judge's inputs carry the points.
    check(sandbox.probe("is_autograd_function", "Cube"),
          "Cube must be a class deriving from torch.autograd.Function.", misconception="cube_not_a_function")
    x = torch.randn(4, generator=_gen(26), dtype=torch.float64)
    res = sandbox.probe("apply_with_grad", "Cube", x, torch.ones_like(x))
    node = res["node"] or "none"
    check(node.endswith("Backward") and not node[-1].isdigit(),
          f"Cube.apply(x) produced a tensor whose grad_fn is {node}, not your Function's "
          f"backward node: compute the forward without autograd tracking inside forward "
          f"(it runs in no-grad mode anyway) and return a fresh tensor, and write backward "
          f"by hand.", misconception="cube_not_a_function")


# ---------------------------------------------------------------- second_derivative

def _expected_second(name, x):
    if name == "sin":
        return -torch.sin(x)
    if name == "exp":
        return torch.exp(x)
    if name == "cube":
        return 6 * x
    if name == "x_tanh":
        t = torch.tanh(x)
        s2 = 1 - t ** 2
        return 2 * s2 - 2 * x * t * s2
    if name == "log1p_sq":
        return (2 - 2 * x ** 2) / (1 + x ** 2) ** 2
    raise KeyError(name)


LABELS = [("sin", "torch.sin"), ("exp", "torch.exp"), ("cube", "x ** 3"), ("x_tanh", "x * tanh(x)"),
          ("log1p_sq", "log(1 + x^2)")]


def _expected_first(name, x):
    return {"sin": torch.cos(x), "exp": torch.exp(x), "cube": 3 * x ** 2,
            "x_tanh": torch.tanh(x) + x * (1 - torch.tanh(x) ** 2),
            "log1p_sq": 2 * x / (1 + x ** 2)}[name]


_JUDGE_F = {"sin": torch.sin, "exp": torch.exp, "cube": lambda t: t ** 3, "x_tanh": lambda t: t * torch.tanh(t),
            "log1p_sq": lambda t: torch.log1p(t * t)}
# The steps and schemes a finite difference is written with: the judge computes each itself, and names finite
# differences only when the student's values are one of them (issue 44: a cause only where the values prove it)
_STEPS = [m * 10.0 ** -k for k in range(1, 8) for m in (1.0, 2.0, 5.0)]
_SCHEMES = {"central": lambda f, x, h: (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2,
            "forward": lambda f, x, h: (f(x + 2 * h) - 2 * f(x + h) + f(x)) / h ** 2,
            "backward": lambda f, x, h: (f(x) - 2 * f(x - h) + f(x - 2 * h)) / h ** 2}


def _finite_difference_fit(name, x, value):
    """(scheme, h) of the finite difference whose values the student's are, to rounding; None when none is."""
    f = _JUDGE_F[name]
    for scheme, formula in _SCHEMES.items():
        for h in _STEPS:
            fd = formula(f, x, h)
            if torch.allclose(value, fd, rtol=1e-9, atol=1e-9 * (1 + float(fd.abs().max()))):
                return scheme, h
    return None


def _second_of(sandbox, name, x, label):
    try:
        return sandbox.probe("second_derivative_of", name, x)
    except StudentError as e:
        if "does not require grad" in str(e):
            fail(f"second_derivative(f, x) for f(x) = {label} raised: {str(e).splitlines()[0]} The first "
                 "derivative was computed without create_graph=True, so it has no graph to differentiate "
                 "again.", misconception="no_create_graph")
        raise


@pytest.mark.rules("second_derivative")
@pytest.mark.points(1.5)
def test_second_derivative_values(sandbox):
    """second_derivative is exact for sin, exp, x^3, x tanh x and log(1 + x^2)"""
    x = torch.randn(3, 4, generator=_gen(31), dtype=torch.float64) * 1.5
    for name, label in LABELS:
        res = _second_of(sandbox, name, x, label)
        expected = _expected_second(name, x)
        value = res["value"]
        if (isinstance(value, torch.Tensor) and value.shape == expected.shape
                and not torch.allclose(value.double(), expected, rtol=1e-10, atol=1e-12)
                and torch.allclose(value.double(), expected, rtol=1e-3, atol=1e-3)):
            err = (value.double() - expected).abs().max().item()
            fit = _finite_difference_fit(name, x, value.double()) if value.dtype == torch.float64 else None
            said = (f"The result of second_derivative(f, x) for f(x) = {label} is close to the exact second "
                    f"derivative but not exact (max error {err:.2g}; float64 results must agree to about 1e-10).")
            if fit is not None:
                fail(f"{said} Your values are the {fit[0]} finite difference with step h = {fit[1]:g}, to "
                     "rounding: differentiate twice with autograd instead (create_graph=True the first time).",
                     misconception="finite_differences")
            fail(f"{said} Differentiate f twice with autograd (create_graph=True the first time): that is "
                 "exact.")
        assert_close(value, expected, rtol=1e-10, atol=1e-12,
                     name=f"the result of second_derivative(f, x) for f(x) = {label}",
                     misconceptions={
                         "first_derivative": ("It is the first derivative: differentiate the first derivative "
                                              "once more.", _expected_first(name, x)),
                         "no_create_graph": ("It is all zeros, what differentiating a first derivative "
                                             "computed without create_graph=True gives: it has no graph left to "
                                             "differentiate.",
                                             torch.zeros_like(x)),
                     },
                     hint="Differentiate f once with torch.autograd.grad(..., create_graph=True), "
                          "then differentiate that first derivative again.")


@pytest.mark.rules("second_derivative", "inputs_unmodified")
@pytest.mark.points(0.5)
def test_second_derivative_dtype_and_input(sandbox):
    """second_derivative keeps shape and dtype (float32 too) and leaves x untouched"""
    x = torch.randn(2, 3, 2, generator=_gen(32), dtype=torch.float64).float()
    res = sandbox.probe("second_derivative_of", "sin", x)
    assert_close(res["value"], -torch.sin(x), rtol=1e-5, atol=1e-6,
                 name="the result of second_derivative(torch.sin, x) for a float32 (2, 3, 2) x")
    after = res["input_after"]  # the caller's x as it is after the call, compared here
    check(isinstance(after, torch.Tensor) and after.dtype == x.dtype and after.shape == x.shape
          and torch.equal(after, x),
          "second_derivative modified the values of its input x.")


@pytest.mark.rules("second_derivative", "inputs_unmodified")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_second_derivative_leaves_requires_grad(sandbox):
    """second_derivative leaves the caller's x not requiring grad (advice: 0 points)"""
    # x.requires_grad is a flag of an object in the student's process: advice, worth nothing (issue 43).
    x = torch.randn(2, 3, generator=_gen(34), dtype=torch.float64)
    res = sandbox.probe("second_derivative_of", "sin", x)
    check(not res["input_requires_grad"],
          "After second_derivative(f, x), the caller's x requires grad: you switched on "
          "requires_grad on the input itself. Work on x.detach().clone() instead.", misconception="flags_callers_x")
    res = sandbox.probe("second_derivative_of", "sin", x, True)
    assert_close(res["value"], -torch.sin(x), rtol=1e-5, atol=1e-6,
                 name="the result of second_derivative(torch.sin, x) for an x that requires grad")
    check(res["input_requires_grad"],
          "After second_derivative(f, x) for an x that requires grad, the caller's x no longer requires grad: the "
          "function changed its input's requires_grad flag. Work on x.detach().clone() instead.")


@pytest.mark.rules("second_derivative")
@pytest.mark.points(0.5)
def test_second_derivative_of_linear_function(sandbox):
    """second_derivative of a linear f is zero everywhere"""
    x = torch.randn(5, generator=_gen(33), dtype=torch.float64)
    try:
        res = sandbox.probe("second_derivative_of", "linear", x)
    except StudentError as e:
        if "does not require grad" not in str(e):
            raise
        works = True
        try:  # the same code on a nonlinear f: when that works, only the linear case is missing
            sandbox.probe("second_derivative_of", "sin", x)
        except StudentError:
            works = False
        fail(f"second_derivative(f, x) for the linear f(x) = 3x + 1 raised: {str(e).splitlines()[0]}"
             + (" The first derivative of a linear f is a constant with no graph; its second derivative is zero "
                "everywhere: return zeros instead of differentiating again." if works else ""),
             misconception="linear_raises" if works else "")
    assert_close(res["value"], torch.zeros_like(x), rtol=0, atol=1e-12,
                 name="the result of second_derivative(f, x) for f(x) = 3x + 1",
                 hint="The first derivative of a linear f is a constant that does not "
                      "depend on x (it has no grad_fn); the second derivative is then zero.")


# ---------------------------------------------------------------- generated inputs

@pytest.mark.rules("ste_forward", "ste_backward", "cube", "second_derivative")
@pytest.mark.points(1)
def test_generated_inputs(sandbox):
    """Cube, StraightThroughRound and second_derivative on generated shapes and values, ties included"""
    values = st.one_of(st.floats(-8, 8, allow_nan=False, width=64), st.integers(-16, 16).map(lambda k: k / 2))

    @GENERATED
    @given(st.lists(values, min_size=1, max_size=12), st.sampled_from([(-1,), (1, -1), (-1, 1)]),
           st.sampled_from(LABELS), st.integers(0, 2 ** 16))
    def run(vals, shape, fn, seed):
        x = torch.tensor(vals, dtype=torch.float64).reshape(shape)
        g = torch.randn(x.shape, generator=_gen(seed), dtype=torch.float64) + 0.5
        cube = sandbox.probe("apply_with_grad", "Cube", x, g)
        assert_close(cube["y"], x ** 3, rtol=1e-12, atol=1e-12, name=f"Cube.apply(x) for x = {vals}")
        check(cube["grad"] is not None, "Backpropagating through Cube gave no gradient for its input.")
        assert_close(cube["grad"], 3 * x ** 2 * g, rtol=1e-10, atol=1e-12,
                     name=f"the gradient through Cube at x = {vals}", misconceptions=lambda: _cube_misconceptions(x, g))
        ste = sandbox.probe("apply_with_grad", "StraightThroughRound", x, g)
        assert_close(ste["y"], torch.round(x), rtol=0, atol=0, name=f"StraightThroughRound.apply(x) for x = {vals}")
        assert_close(ste["grad"], g, rtol=0, atol=0, name="the gradient through StraightThroughRound")
        name, label = fn
        xs = x.clamp(-3, 3)  # exp and x tanh x stay well inside float64
        res = sandbox.probe("second_derivative_of", name, xs)
        assert_close(res["value"], _expected_second(name, xs), rtol=1e-9, atol=1e-11,
                     name=f"second_derivative(f, x) for f(x) = {label} at x = {xs.flatten().tolist()}")

    run()


# ---------------------------------------------------------------- the conventions

@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_leaves_inputs_and_settings_as_found(student, sandbox):
    """StraightThroughRound, Cube and second_derivative leave their input and torch's global settings as found"""
    values = st.one_of(st.floats(-8, 8, allow_nan=False, width=32), st.integers(-16, 16).map(lambda k: k / 2))

    @GENERATED
    @given(st.lists(values, min_size=1, max_size=8), st.sampled_from([torch.float64, torch.float32]),
           st.sampled_from(["torch.sin", "torch.exp", "torch.tanh"]))
    def run(vals, dtype, fn):
        x = torch.tensor(vals, dtype=dtype)
        shown = f"x = torch.tensor({vals}, dtype={dtype})"
        as_found(sandbox, student.StraightThroughRound.apply, x, call=f"StraightThroughRound.apply(x) with {shown}",
                 names=["x"])
        as_found(sandbox, student.Cube.apply, x, call=f"Cube.apply(x) with {shown}", names=["x"])
        as_found(sandbox, student.second_derivative, sandbox.ref(fn), x.clamp(-3, 3),
                 call=f"second_derivative({fn}, x) with x the clamp to [-3, 3] of {shown[4:]}",
                 names=["f", "x"])

    run()
