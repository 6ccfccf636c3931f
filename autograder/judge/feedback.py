"""Judge-side checks whose failure messages teach.

Everything here runs in the judge on decoded values. A message says what was
expected, what came back, and (when the returned value matches a known-wrong
approach) the likely misconception, in the student's terms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import torch

# Staff suites import Failure from here; it is defined with every other error in autograder/errors.py.
from autograder.errors import Failure as Failure
from autograder.sandbox.wire import crosses_exactly


def fail(message: str, misconception: str = "") -> None:
    raise Failure(message, misconception)


REVIEW: list[str] = []  # the running test's review reasons (plugin._run_item reads and clears them)


def review(reason: str) -> None:
    """Flag the submission for a TA's review, with ``reason``; the test's points are unaffected.

    For advice (a 0-point test on a fact only the student's process reports, issue 43) whose evidence
    contradicts values the judge verified: the sandbox said "micro-batches" while the kernel measured the
    whole batch's memory, say. The reason is staff-facing: say what the sandbox claimed and what was measured.
    """
    REVIEW.append(reason)


def check(condition: Any, message: str, misconception: str = "") -> None:
    """Fail with ``message`` unless ``condition`` holds; a NaN (float or one-element tensor) never holds."""
    if not _holds(condition):
        raise Failure(message, misconception)


def _holds(condition: Any) -> bool:
    """Truth without NaN's loophole: ``bool(float("nan"))`` and ``bool(torch.tensor(nan))`` are True."""
    if isinstance(condition, float | np.floating) and math.isnan(condition):
        return False
    if isinstance(condition, torch.Tensor) and condition.numel() == 1 and bool(torch.isnan(condition).any()):
        return False
    return bool(condition)


def within(value: Any, expected: float, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """``|value - expected| <= atol + rtol * |expected|`` for a real number, and False for NaN, inf or a
    non-number: the NaN-safe form of a suite's inline comparison (``abs(a - b) > tol`` lets a NaN pass)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return bool(math.isfinite(value) and abs(value - expected) <= atol + rtol * abs(expected))
    except OverflowError:  # an int too large for a float
        return False


def remote_meta(t: Any) -> dict[str, Any]:
    """Sandbox-side facts about a returned tensor (device, requires_grad, is_leaf, grad_fn, dtype).

    These are only *asserted* by the sandbox, whose encoder student code can
    reach: use them to choose a message, never to award points when the judge
    can observe the effect itself (send an upstream gradient through a probe
    and compare the gradient that comes back).
    """
    meta = getattr(t, "remote_meta", None)
    if meta is None:
        raise TypeError("remote_meta() needs a tensor that came back from the sandbox")
    return meta


def shares_storage(a: Any, b: Any, name: str = "the result") -> bool:
    """True when two decoded tensors (from one message) share storage, as they did in the sandbox.

    Fails the test (rather than erroring) when either side is not a tensor.
    """
    for v in (a, b):
        if not isinstance(v, torch.Tensor):
            fail(f"Expected {name} to be a torch.Tensor, but got {describe(v)}.")
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def passed(t: torch.Tensor) -> str:
    """A tensor as the grader passed it, in full: what a quote says where no expression rebuilds the call."""
    where = "" if t.device.type == "cpu" else f" on {t.device}"
    return (f"a {tuple(t.shape)} {str(t.dtype).removeprefix('torch.')} tensor{where} with strides {t.stride()} "
            f"and storage offset {t.storage_offset()}")


def quote(call: str, *args: Any) -> str:
    """``call`` (an expression such as ``"(x, x[1])"``) when every tensor among ``args`` reaches the student's
    function as that expression builds it (same storage, view of the same base, one object named twice:
    :func:`autograder.sandbox.wire.crosses_exactly`); else the arguments as passed, shape, strides and offset,
    so that feedback never quotes a call that did not happen as written."""
    if all(crosses_exactly(a) for a in args if isinstance(a, torch.Tensor)):
        return call
    return "(" + ", ".join(passed(a) if isinstance(a, torch.Tensor) else _short(a) for a in args) + ")"


def describe(value: Any) -> str:
    """A short, student-readable description of a value's type."""
    if isinstance(value, torch.Tensor):
        return f"a {tuple(value.shape)} {str(value.dtype).removeprefix('torch.')} tensor"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of shape {value.shape} and dtype {value.dtype}"
    remote = getattr(value, "remote_type", None)
    if remote:
        return f"{'an' if remote[:1].lower() in 'aeiou' else 'a'} {remote} object"
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name} ({_short(value)})"


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _fmt(x: float) -> str:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.6g}"


def _apart(got: float, want: float, *, rtol: float, atol: float) -> tuple[str, str]:
    """``got`` and ``want`` printed so that they read differently whenever they differ.

    Six significant digits suit most differences; when both print the same at six, the message would
    contradict itself ("got 0.0857556, expected 0.0857556"), so both get the digits that tell them apart
    (up to 17) and ``got`` adds the difference and the tolerance it exceeds.
    """
    g, w = _fmt(got), _fmt(want)
    if g != w or math.isnan(got) or math.isnan(want) or math.isinf(got) or math.isinf(want):
        return g, w
    for digits in range(7, 18):
        g, w = f"{got:.{digits}g}", f"{want:.{digits}g}"
        if g != w:
            break
    diff = abs(got - want)
    return f"{g} (a difference of {diff:.3g}, above the tolerance {atol + rtol * abs(want):.3g})", w


def _close(actual: Any, candidate: Any, rtol: float, atol: float) -> bool:
    if not isinstance(actual, torch.Tensor):
        actual = torch.as_tensor(actual, dtype=torch.float64)
    if not isinstance(candidate, torch.Tensor):
        candidate = torch.as_tensor(candidate)
    if actual.shape != candidate.shape:
        return False
    a = actual.detach().to(torch.float64) if not actual.is_complex() else actual.detach().to(torch.complex128)
    c = candidate.detach().to(a.dtype)
    # NaN where the mistake gives NaN is part of its footprint (a fractional power of a negative number)
    return bool(torch.allclose(a, c, rtol=rtol, atol=atol, equal_nan=True))


# known-wrong values by key (see assert_close), or a function that builds them when a result is wrong
Misconceptions = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


def _diagnose(actual: Any, misconceptions: Misconceptions, rtol: float, atol: float) -> tuple[str, str]:
    """(" message", key) of the first misconception whose value the result matches, else ("", "").

    ``misconceptions`` maps a key to ``(message, wrong_value)``; the older form
    ``{message: wrong_value}`` is read with the message as its own key.
    """
    if not misconceptions or not isinstance(actual, torch.Tensor | int | float) or isinstance(actual, bool):
        return "", ""
    if callable(misconceptions):
        misconceptions = misconceptions()
        if not misconceptions:
            return "", ""
    hits = []
    for key, entry in misconceptions.items():
        message, candidate = entry if isinstance(entry, tuple) else (key, entry)
        try:
            if _close(actual, candidate, max(rtol, 1e-5), max(atol, 1e-7)):
                hits.append((key, message))
        except (RuntimeError, TypeError, ValueError):
            continue
    if len(hits) != 1:  # none, or several mistakes that give this value here: the evidence names no one cause
        return "", ""
    key, message = hits[0]
    return " " + _sentence(message), key


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    name: str = "the result",
    misconceptions: Misconceptions = None,
    hint: str | None = None,
    check_dtype: bool = True,
    equal_nan: bool = False,
) -> None:
    """Compare a returned value with the expected one; fail with a message that teaches.

    What ``expected`` is decides what ``actual`` must be:

    - a ``torch.Tensor``: a tensor of the same shape and dtype (``check_dtype=False``
      skips the dtype), finite where ``expected`` is, and within tolerance;
    - a NumPy array: a NumPy array (a tensor is refused with a message saying so),
      then the same checks as tensors;
    - a Python ``int``/``float``: a Python number (a one-element tensor is refused:
      "use .item()"), within tolerance;
    - anything else (a string, a tuple of ints, None): equal.

    Values are close when ``|actual - expected| <= atol + rtol * |expected|``
    elementwise (``torch.isclose``). The defaults (``rtol=1e-10, atol=1e-12``) are
    for float64 results computed the same way; loosen them for float32
    (``rtol=1e-5, atol=1e-6``) or for results computed differently.

    ``misconceptions`` maps a key to ``(message, wrong_value)``: when ``actual``
    matches ``wrong_value`` (at a tolerance of at least ``rtol=1e-5, atol=1e-7``; NaN
    matching NaN) and no other entry's, the message is appended as its own sentence
    and the key lands in the test's result. When two entries match, neither is named:
    choose inputs on which the mistakes differ. Write the message as what the student did and why it is wrong, in
    one sentence that does not give the answer away, e.g.
    ``"The gradient is n times too large: cross_entropy averages over the batch, so divide by n."``.
    ``hint`` is appended when no misconception matched. ``misconceptions`` may also be a function
    of no arguments that returns that mapping: it is called only when the result is wrong, so the
    known-wrong values cost nothing for a right one (``misconceptions=lambda: _wrong(x)``).
    """
    if isinstance(expected, np.ndarray):
        _assert_close_numpy(actual, expected, rtol=rtol, atol=atol, name=name, misconceptions=misconceptions,
                            hint=hint, check_dtype=check_dtype, equal_nan=equal_nan)
        return
    if not isinstance(expected, torch.Tensor):
        _assert_close_scalar(actual, expected, rtol=rtol, atol=atol, name=name, hint=hint,
                             misconceptions=misconceptions)
        return
    if isinstance(actual, np.ndarray):
        fail(f"Expected {name} to be a torch.Tensor, but got {describe(actual)}. Return a tensor, not a NumPy array.")
    if not isinstance(actual, torch.Tensor):
        fail(f"Expected {name} to be a torch.Tensor, but got {describe(actual)}.")
    why = _Diagnosis(actual, misconceptions, rtol, atol, f" {_sentence(hint)}" if hint else "")
    if actual.shape != expected.shape:
        why.fail(f"Expected {name} to have shape {tuple(expected.shape)}, but it has shape {tuple(actual.shape)}.")
    if check_dtype and actual.dtype != expected.dtype:
        why.fail(
            f"Expected {name} to have dtype {str(expected.dtype).removeprefix('torch.')}, "
            f"but it is {str(actual.dtype).removeprefix('torch.')}.",
            otherwise=" Keep the dtype of the inputs.",
        )
    if actual.numel() == 0:
        return
    a = actual.detach().to(torch.complex128 if actual.is_complex() else torch.float64)
    e = expected.detach().to(a.dtype)
    _check_finite(a, e, name=name, why=why, equal_nan=equal_nan)
    _check_values(a, e, name=name, why=why, rtol=rtol, atol=atol, equal_nan=equal_nan)


@dataclass
class _Diagnosis:
    """The misconception a failing tensor matches, worked out only once a check has failed.

    Diagnosing compares the result with every known-wrong value, which costs more than the
    comparison itself; a result that passes never pays for it.
    """

    actual: torch.Tensor
    misconceptions: Misconceptions
    rtol: float
    atol: float
    hint: str  # the hint's sentence (with its leading space), or ""

    def fail(self, message: str, otherwise: str | None = None) -> NoReturn:
        """Fail with ``message``, then the matched misconception's sentence, else ``otherwise`` (the hint)."""
        diag, key = _diagnose(self.actual, self.misconceptions, self.rtol, self.atol)
        raise Failure(message + (diag or (self.hint if otherwise is None else otherwise)), key)


def _assert_close_numpy(actual: Any, expected: np.ndarray, *, rtol: float, atol: float, name: str,
                        misconceptions: Misconceptions, hint: str | None, check_dtype: bool,
                        equal_nan: bool) -> None:
    """A NumPy result must be a NumPy array (not a tensor); numbers are then compared as tensors."""
    if isinstance(actual, torch.Tensor):
        fail(f"Expected {name} to be a NumPy array, but got {describe(actual)}. Return a NumPy array "
             "(`.numpy()`), not a tensor.")
    if not isinstance(actual, np.ndarray):
        fail(f"Expected {name} to be a NumPy array, but got {describe(actual)}.")
    if actual.dtype.kind not in "biufc" or expected.dtype.kind not in "biufc":
        if actual.shape != expected.shape or not np.array_equal(actual, expected):
            fail(f"Expected {name} to equal the expected {describe(expected)}, but got {describe(actual)}.")
        return
    if check_dtype and actual.dtype != expected.dtype:
        fail(f"Expected {name} to have dtype {expected.dtype}, but it is {actual.dtype}. Keep the dtype of "
             "the inputs.")
    assert_close(torch.from_numpy(np.array(actual)), torch.from_numpy(np.array(expected)), rtol=rtol, atol=atol,
                 name=name, misconceptions=misconceptions, hint=hint, check_dtype=False, equal_nan=equal_nan)


NON_FINITE = (" Find the first operation that produces it: the usual sources are an exp of a large number, a "
              "division by zero, a log of zero and a fractional power of a negative number.")


def _check_finite(a: torch.Tensor, e: torch.Tensor, *, name: str, why: _Diagnosis, equal_nan: bool) -> None:
    """A NaN or inf where the expected value is finite gets its own message: it has its own usual causes."""
    bad_a = ~torch.isfinite(a)
    bad_e = ~torch.isfinite(e)
    if equal_nan:
        bad_a = bad_a & ~(torch.isnan(a) & torch.isnan(e))
    if bad_a.any() and not (bad_e == bad_a).all():
        idx = _index(bad_a & ~bad_e, a.shape)
        value = _fmt(a[idx].item() if not a.is_complex() else float("nan"))
        where = (f"{_cap(name)} is {value} where a finite value was expected." if a.numel() == 1 else
                 f"{_cap(name)} contains {value} at index {idx} where a finite value was expected "
                 f"({int((bad_a & ~bad_e).sum())} such entries).")
        why.fail(where, otherwise=why.hint or NON_FINITE)


def _check_values(a: torch.Tensor, e: torch.Tensor, *, name: str, why: _Diagnosis, rtol: float,
                  atol: float, equal_nan: bool = False) -> None:
    """Name the worst entry and how many differ, so the student can find the bug's footprint."""
    # a NaN equals nothing, not even an expected NaN, unless the caller allows it
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(close.all()):
        return
    err = (a - e).abs()
    err = torch.where(close, torch.zeros_like(err), torch.nan_to_num(err, nan=float("inf")))
    flat = int(torch.argmax(err.real if err.is_complex() else err))
    idx = _unravel(flat, a.shape)
    n_bad = int((~close).sum())
    if a.is_complex():
        got, want = str(a[idx].item()), str(e[idx].item())
    else:
        got, want = _apart(a[idx].item(), e[idx].item(), rtol=rtol, atol=atol)
    if a.numel() == 1:
        extra = f" Got {got}, expected {want}."
        head = f"{_cap(name)} has the right shape and dtype but the wrong value."
    else:
        extra = (f" {n_bad} of {a.numel()} entries differ; the largest difference is at index {idx}: "
                 f"got {got}, expected {want}.")
        head = f"{_cap(name)} has the right shape and dtype but wrong values."
    why.fail(f"{head}{extra}")


def _fail_keyed(key: str, message: str) -> None:
    raise Failure(message, key)


def _assert_close_scalar(actual: Any, expected: Any, *, rtol: float, atol: float, name: str, hint: str | None,
                         misconceptions: Misconceptions = None) -> None:
    tail = f" {_sentence(hint)}" if hint else ""
    if isinstance(expected, bool) or not isinstance(expected, int | float):
        if actual != expected:
            fail(f"Expected {name} to be {_short(expected)}, but got {describe(actual)}.{tail}")
        return
    if isinstance(actual, torch.Tensor) and actual.numel() == 1:
        fail(f"Expected {name} to be a Python number, but got {describe(actual)}. Use .item().{tail}")
    if isinstance(actual, bool) or not isinstance(actual, int | float):
        fail(f"Expected {name} to be a number, but got {describe(actual)}.{tail}")
    if not math.isclose(float(actual), float(expected), rel_tol=rtol, abs_tol=atol):
        diag, key = _diagnose(actual, misconceptions, rtol, atol)
        got, want = _apart(float(actual), float(expected), rtol=rtol, atol=atol)
        if got == _fmt(float(actual)):
            said = f"{_cap(name)} is {got}, which is not the expected value."
        else:  # equal at 6 digits: say both, precisely, so the message never reads "got x, expected x"
            said = f"{_cap(name)} is {got}, which is not the expected value ({want})."
        _fail_keyed(key, f"{said}{diag or tail}")


def _cap(s: str) -> str:
    """Capitalise prose ("the result" -> "The result"), never an identifier ("exercise_result()")."""
    return s[:1].upper() + s[1:] if s.split(" ", 1)[0] in ("the", "a", "an", "your", "each", "every") else s


def _sentence(s: str) -> str:
    """A message appended after another sentence starts with a capital, unless it starts with code.

    "the fit has no intercept" -> "The fit has no intercept"; "`x.sum()` drops..." and
    "row_means(x) ..." are left alone.
    """
    s = s.strip()
    first = s.split(" ", 1)[0]
    if first[:1].islower() and first.rstrip(",:;.").isalpha():
        return s[:1].upper() + s[1:]
    return s


ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """Drop terminal colour and cursor codes (torch and its compilers colour some messages)."""
    return ANSI.sub("", text)


def _unravel(flat: int, shape: Sequence[int]) -> tuple[int, ...]:
    idx = []
    for n in reversed(shape):
        idx.append(flat % n)
        flat //= n
    return tuple(reversed(idx))


def _index(mask: torch.Tensor, shape: Sequence[int]) -> tuple[int, ...]:
    return _unravel(int(torch.nonzero(mask.flatten())[0]), shape)


def gradcheck(
    f: Callable[..., Any],
    inputs: Sequence[torch.Tensor],
    analytic: Sequence[torch.Tensor],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    name: str = "the gradient",
    max_checks: int | None = 64,
    generator: torch.Generator | None = None,
) -> None:
    """Check ``analytic`` gradients of a scalar ``f(*inputs)`` by central differences in the judge.

    ``f`` is a judge-side callable (it may call the sandbox for *values*);
    the finite differences and the comparison never run in the sandbox, so a
    student cannot fake them. At most ``max_checks`` coordinates per input are
    probed (chosen at random), which keeps a check within a few hundred calls.
    """
    base = [x.detach().clone().to(torch.float64) for x in inputs]

    def value(xs: list[torch.Tensor]) -> float:
        out = f(*xs)
        if isinstance(out, torch.Tensor):
            if out.numel() != 1:
                fail(f"Expected a scalar loss but got {describe(out)}.")
            return float(out.detach().to(torch.float64).item())
        if isinstance(out, int | float):
            return float(out)
        fail(f"Expected a scalar loss but got {describe(out)}.")
        return 0.0

    for k, (x, g) in enumerate(zip(base, analytic, strict=True)):
        if not isinstance(g, torch.Tensor) or g.shape != x.shape:
            fail(f"Expected {name} for input {k} to be a tensor of shape {tuple(x.shape)}, got {describe(g)}.")
        n = x.numel()
        coords = list(range(n))
        if max_checks is not None and n > max_checks:
            coords = torch.randperm(n, generator=generator)[:max_checks].tolist()
        for c in coords:
            plus = [y.clone() for y in base]
            minus = [y.clone() for y in base]
            plus[k].view(-1)[c] += eps
            minus[k].view(-1)[c] -= eps
            numeric = (value(plus) - value(minus)) / (2 * eps)
            got = float(g.detach().to(torch.float64).reshape(-1)[c])
            if not math.isclose(got, numeric, rel_tol=rtol, abs_tol=atol):
                idx = _unravel(c, x.shape)
                fail(
                    f"{_cap(name)} disagrees with finite differences for input {k} at index {idx}: "
                    f"your backward gives {_fmt(got)}, the numerical derivative is {_fmt(numeric)}."
                )
