"""Hidden suite for lr_scaling (contract: distributed-training, section 5).

Expected values are computed here; so are the values of the known mistakes
(forgetting the world size or the accumulation, the square-root rule, the
inverted ratio, floor division)."""
import math
import random

import pytest

from autograder.judge import as_found, check, fail

# The one place each misconception's sentence is written (validate checks every mutant's feedback against it;
# grading appends the sentence to a failure keyed with it).
MISCONCEPTIONS = {
    "ignores_world": "The world size is missing: every rank contributes its batch to each step, so the effective "
                     "batch is per_rank_batch * world_size (times accum_steps).",
    "ignores_accum": "The accumulation steps are missing: each optimizer step averages accum_steps micro-batches "
                     "per rank.",
    "accum_default": "accum_steps must default to 1 (one micro-batch per step); a default of 0 makes every "
                     "effective batch 0.",
    "types": "Return the type the contract names: a Python int from effective_batch, a Python float from "
             "scaled_lr.",
    "sqrt_rule": "It looks like the square-root rule; the linear rule multiplies by the ratio itself.",
    "inverse_ratio": "It looks like the ratio is upside down: a larger effective batch gets a larger learning "
                     "rate.",
    "floor_division": "It looks like integer (floor) division lost the fraction: use / rather than //.",
}


def _cases(seed, count):
    rng = random.Random(seed)
    out = [(32, 4, 1), (16, 8, 4), (1, 1, 1), (24, 3, 5)]
    while len(out) < count:
        out.append((rng.choice([1, 2, 8, 12, 16, 32, 48, 64, 100]), rng.randint(1, 64), rng.randint(1, 16)))
    return out


@pytest.mark.rules("effective_batch")
@pytest.mark.points(3)
def test_effective_batch_values(student):
    """effective_batch counts every rank and every accumulated micro-batch"""
    answers = [((per, world, accum), student.effective_batch(per, world, accum)) for per, world, accum in
               _cases(51, 25)]
    wrong = [(args, got) for args, got in answers if got != args[0] * args[1] * args[2]]
    if wrong:
        (per, world, accum), got = wrong[0]
        msg = f"effective_batch({per}, {world}, {accum}) returned {got!r}, expected {per * world * accum}."
        # a cause only when every answer, right ones included, is that mistake's and no other's (issue 44)
        fits = _fits(answers, {"ignores_world": lambda p, w, a: p * a, "ignores_accum": lambda p, w, a: p * w})
        if fits == ["ignores_world"]:
            fail(msg, misconception="ignores_world")
        if fits == ["ignores_accum"]:
            fail(msg, misconception="ignores_accum")
        fail(msg)


def _fits(answers, formulas, rel=0.0):
    """The keys of the formulas that give every answer (args, got) the student gave, right ones included:
    one number that fits a mistake proves nothing; all of them, on inputs where the mistakes differ, do."""
    def close(got, value):
        number = isinstance(got, int | float) and not isinstance(got, bool)
        return number and abs(got - value) <= rel * abs(value)
    return [key for key, f in formulas.items() if all(close(got, f(*args)) for args, got in answers)]


@pytest.mark.rules("effective_batch")
@pytest.mark.points(1)
def test_effective_batch_default_and_type(student):
    """effective_batch's accum_steps defaults to 1 and the result is an int"""
    got = student.effective_batch(48, 3)
    if got != 144:
        # one number proves nothing: the cause needs the same formula on explicit arguments as well (issue 44)
        explicit = [((p, w, a), student.effective_batch(p, w, a)) for p, w, a in ((48, 3, 1), (8, 2, 3), (5, 7, 2))]
        if got == 48 and _fits(explicit, {"w": lambda p, w, a: p * a}):  # a missing world size, not a default
            fail("effective_batch(48, 3) returned 48, expected 144; effective_batch(48, 3, 1) returned "
                 f"{explicit[0][1]!r}.", misconception="ignores_world")
        right = _fits(explicit, {"right": lambda p, w, a: p * w * a})
        check(got == 144, f"effective_batch(48, 3) returned {got!r}, expected 144 (accum_steps defaults to 1).",
              misconception="accum_default" if got == 0 and right else "")  # a default of 0 accumulation steps
    got = student.effective_batch(8, 2, 3)
    check(type(got) is int, f"effective_batch(8, 2, 3) returned a {type(got).__name__}.", misconception="types")


def _wrong_lrs(lr, per, world, base):
    """What each known mistake returns; its sentence is the registry's."""
    return {
        "sqrt_rule": lr * math.sqrt(per * world / base),
        "inverse_ratio": lr * base / (per * world),
        "ignores_world": lr * per / base,
        "floor_division": float(lr * per * world // base),
    }


def _wrong_lr(key):
    """What the mistake ``key`` returns, as a function of scaled_lr's arguments."""
    return lambda *args: _wrong_lrs(*args)[key]


@pytest.mark.rules("scaled_lr")
@pytest.mark.points(4)
def test_scaled_lr_values(student):
    """scaled_lr applies the linear scaling rule"""
    rng = random.Random(52)
    cases = [(0.1, 32, 8, 256), (3e-4, 16, 3, 64), (0.05, 12, 5, 256), (1.0, 7, 3, 16)]
    cases += [(rng.choice([1e-3, 0.01, 0.1, 0.4]), rng.choice([8, 12, 32, 48]), rng.randint(1, 16),
               rng.choice([32, 64, 100, 256])) for _ in range(16)]
    answers = [((lr, per, world, base), student.scaled_lr(lr, per, world, base)) for lr, per, world, base in cases]
    for (lr, per, world, base), got in answers:
        expected = lr * per * world / base
        if isinstance(got, (int, float)) and abs(got - expected) <= 1e-12 * abs(expected):
            continue
        msg = f"scaled_lr({lr}, {per}, {world}, {base}) returned {got!r}, expected {expected!r}."
        # a cause only when every answer, right ones included, is that mistake's and no other's (issue 44)
        hits = _fits(answers, {k: _wrong_lr(k) for k in _wrong_lrs(1.0, 1, 1, 1)}, rel=1e-9)
        if len(hits) == 1:  # one mistake alone explains the values
            fail(msg, misconception=hits[0])
        fail(msg + " The linear scaling rule: base_lr * per_rank_batch * world_size / base_batch.")


@pytest.mark.rules("scaled_lr", "global_settings")
@pytest.mark.points(1)
def test_scaled_lr_returns_a_float(student, sandbox):
    """scaled_lr returns a Python float, even for integer inputs; both functions leave torch's settings as found"""
    as_found(sandbox, student.effective_batch, 32, 4, 2, call="effective_batch(32, 4, 2)")
    got = as_found(sandbox, student.scaled_lr, 2, 64, 4, 128, call="scaled_lr(2, 64, 4, 128)")
    check(type(got) is float, f"scaled_lr(2, 64, 4, 128) returned a {type(got).__name__}.", misconception="types")
    check(got == 4.0, f"scaled_lr(2, 64, 4, 128) returned {got!r}, expected 4.0.")


@pytest.mark.rules("scaled_lr")
@pytest.mark.points(1)
def test_scaled_lr_unchanged_at_the_base_batch(student):
    """scaled_lr leaves the rate unchanged when the effective batch is the base batch"""
    for lr, per, world in [(0.1, 64, 4), (3e-4, 8, 32), (0.02, 256, 1)]:
        got = student.scaled_lr(lr, per, world, per * world)
        check(isinstance(got, float) and abs(got - lr) <= 1e-15 * lr,
              f"scaled_lr({lr}, {per}, {world}, {per * world}) returned {got!r}: the effective batch equals the "
              f"base batch, so the rate should stay {lr}.", misconception="")
