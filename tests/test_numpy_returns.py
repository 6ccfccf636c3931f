"""The wire keeps the type a student returned, so the judge can hold `-> int` to a Python int."""

from __future__ import annotations

from autograder.assignment import load_assignment
from autograder.grade import GradeOptions, grade
from tests.helpers import ROOT

REFERENCE = (ROOT / "solutions/pytorch-fundamentals/param_counts/reference.py").read_text()
NUMPY_INTS = """
import numpy as np


def linear_param_count(d_in, d_out, bias=True):
    return np.int64(d_in * d_out + (d_out if bias else 0))


def count_parameters(model, trainable_only=True):
    return np.int64(sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only))
"""


def test_a_numpy_int64_fails_the_exact_int_checks_with_a_clear_message(tmp_path):
    sub = tmp_path / "numpy_ints.py"
    sub.write_text(REFERENCE + "\n# %%\n" + NUMPY_INTS)
    fundamentals = load_assignment("pytorch-fundamentals", ROOT, only=["param_counts"])
    (r,) = grade(fundamentals, [sub], options=GradeOptions(exercises=["param_counts"]))
    tests = {t.name: t for e in r.exercises for t in e.tests}
    linear = next(t for n, t in tests.items() if n.startswith("linear_param_count"))
    assert linear.status == "failed" and "should return a Python int, got an int64" in linear.message, linear
    counts = [t for t in tests.values() if "count_parameters" in t.message]
    assert counts and all("Python int" in t.message for t in counts), [t.message for t in tests.values()]
    # the rest of the exercise is graded as usual
    assert any(t.status == "passed" for t in tests.values())
