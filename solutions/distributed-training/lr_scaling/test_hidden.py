"""Hidden suite for lr_scaling (contract: distributed-training, section 5).

Expected values are computed here; so are the values of the known mistakes
(forgetting the world size or the accumulation, the square-root rule, the
inverted ratio, floor division)."""
import math
import random

import pytest

from autograder.judge import check, fail

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


@pytest.mark.points(3)
def test_effective_batch_values(student):
    """effective_batch counts every rank and every accumulated micro-batch"""
    for per, world, accum in _cases(51, 25):
        got = student.effective_batch(per, world, accum)
        expected = per * world * accum
        if got == expected:
            continue
        msg = f"effective_batch({per}, {world}, {accum}) returned {got!r}, expected {expected}."
        if world != 1 and got == per * accum:
            fail(msg, misconception="ignores_world")
        if accum != 1 and got == per * world:
            fail(msg, misconception="ignores_accum")
        fail(msg)


@pytest.mark.points(1)
def test_effective_batch_default_and_type(student):
    """effective_batch's accum_steps defaults to 1 and the result is an int"""
    got = student.effective_batch(48, 3)
    if got == 48:  # the evidence of a missing world size, not of a wrong default
        fail("effective_batch(48, 3) returned 48, expected 144.", misconception="ignores_world")
    check(got == 144, f"effective_batch(48, 3) returned {got!r}, expected 144 (accum_steps defaults to 1).",
          misconception="accum_default" if got == 0 else "")  # a default of 0 accumulation steps
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


@pytest.mark.points(4)
def test_scaled_lr_values(student):
    """scaled_lr applies the linear scaling rule"""
    rng = random.Random(52)
    cases = [(0.1, 32, 8, 256), (3e-4, 16, 3, 64), (0.05, 12, 5, 256), (1.0, 7, 3, 16)]
    cases += [(rng.choice([1e-3, 0.01, 0.1, 0.4]), rng.choice([8, 12, 32, 48]), rng.randint(1, 16),
               rng.choice([32, 64, 100, 256])) for _ in range(16)]
    for lr, per, world, base in cases:
        got = student.scaled_lr(lr, per, world, base)
        expected = lr * per * world / base
        if isinstance(got, (int, float)) and abs(got - expected) <= 1e-12 * abs(expected):
            continue
        msg = f"scaled_lr({lr}, {per}, {world}, {base}) returned {got!r}, expected {expected!r}."
        hits = [key for key, value in _wrong_lrs(lr, per, world, base).items()
                if isinstance(got, (int, float)) and abs(got - value) <= 1e-9 * abs(value) and value != expected]
        if len(hits) == 1:  # one mistake alone explains the value
            fail(msg, misconception=hits[0])
        fail(msg + " The linear scaling rule: base_lr * per_rank_batch * world_size / base_batch.")


@pytest.mark.points(1)
def test_scaled_lr_returns_a_float(student):
    """scaled_lr returns a Python float, even for integer inputs"""
    got = student.scaled_lr(2, 64, 4, 128)
    check(type(got) is float, f"scaled_lr(2, 64, 4, 128) returned a {type(got).__name__}.", misconception="types")
    check(got == 4.0, f"scaled_lr(2, 64, 4, 128) returned {got!r}, expected 4.0.")


@pytest.mark.points(1)
def test_scaled_lr_unchanged_at_the_base_batch(student):
    """scaled_lr leaves the rate unchanged when the effective batch is the base batch"""
    for lr, per, world in [(0.1, 64, 4), (3e-4, 8, 32), (0.02, 256, 1)]:
        got = student.scaled_lr(lr, per, world, per * world)
        check(isinstance(got, float) and abs(got - lr) <= 1e-15 * lr,
              f"scaled_lr({lr}, {per}, {world}, {per * world}) returned {got!r}: the effective batch equals the "
              f"base batch, so the rate should stay {lr}.", misconception="")
