"""Feedback text: what a student reads when assert_close fails."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.judge import Failure, assert_close, check
from autograder.judge.feedback import strip_ansi


def test_a_misconception_after_the_numbers_starts_a_capitalised_sentence():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    with pytest.raises(Failure) as e:
        assert_close(x * 2, x, misconceptions={"no_intercept": ("the fit has no intercept", x * 2)})
    assert "expected 3. The fit has no intercept" in str(e.value) and e.value.misconception == "no_intercept"
    with pytest.raises(Failure, match=r"expected 3\. Divide by n\.$"):
        assert_close(x * 2, x, hint="divide by n.")
    # a message that starts with code keeps its case
    with pytest.raises(Failure, match=r"expected 3\. `x.sum\(\)` drops a dimension"):
        assert_close(x * 2, x, misconceptions={"k": ("`x.sum()` drops a dimension", x * 2)})


def test_a_scalar_difference_has_no_index():
    with pytest.raises(Failure) as e:
        assert_close(
            torch.tensor(3.5, dtype=torch.float64), torch.tensor(2.82936, dtype=torch.float64), name="the loss"
        )
    text = str(e.value)
    assert "index ()" not in text and "1 of 1" not in text
    assert text == "The loss has the right shape and dtype but the wrong value. Got 3.5, expected 2.82936."
    with pytest.raises(Failure, match=r"^The loss is inf where a finite value was expected"):
        assert_close(
            torch.tensor(float("inf"), dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64), name="the loss"
        )


def test_python_scalars_get_misconceptions_too():
    with pytest.raises(Failure) as e:
        assert_close(
            9.0, 3.0, rtol=1e-6, name="the variance", misconceptions={"squared": ("the result is squared twice", 9.0)}
        )
    assert str(e.value) == "The variance is 9, which is not the expected value. The result is squared twice"
    assert e.value.misconception == "squared"
    with pytest.raises(Failure, match=r"Use \.item\(\)"):
        assert_close(torch.tensor(3.0), 3.0)


def test_numpy_arrays_are_compared_as_arrays():
    e = np.arange(4.0)
    assert_close(e + 1e-13, e)
    with pytest.raises(Failure, match="to be a NumPy array, but got a \\(4,\\) float64 tensor"):
        assert_close(torch.from_numpy(e), e)
    with pytest.raises(Failure, match="dtype float64, but it is float32"):
        assert_close(e.astype(np.float32), e)
    with pytest.raises(
        Failure,
        match=r"1 of 4 entries differ; the largest difference is at index \(3,\): got 4, "
        r"expected 3\. Off by one at the end",
    ):
        assert_close(
            np.array([0.0, 1.0, 2.0, 4.0]),
            e,
            misconceptions={"k": ("off by one at the end", np.array([0.0, 1.0, 2.0, 4.0]))},
        )


def test_terminal_colour_codes_are_stripped():
    assert strip_ansi("\x1b[31mRuntimeError\x1b[0m: bad \x1b[1;33mshape\x1b[0m") == "RuntimeError: bad shape"
    assert strip_ansi("plain [31m text") == "plain [31m text"


def test_colour_codes_in_a_students_error_never_reach_the_feedback(server, demo, tmp_path):
    from autograder.grade import GradeOptions, grade

    sub = tmp_path / "colour.py"
    sub.write_text(
        (demo.exercise("basics").reference).read_text()
        + '\n\ndef double(x):\n    raise RuntimeError("\\x1b[31mshape mismatch\\x1b[0m in double")\n'
    )
    r = grade(demo, [sub], server=server, options=GradeOptions(exercises=["basics"]))[0]
    messages = [t.message for e in r.exercises for t in e.tests if "double" in t.name]
    assert messages and all("\x1b" not in m for m in messages)
    assert any("RuntimeError: shape mismatch in double" in m for m in messages), messages


def test_got_and_expected_never_print_the_same():
    """Issue 23: "got 0.0857556, expected 0.0857556" contradicted itself; equal at six digits, more are shown."""
    want = torch.tensor([0.08575561234567, 1.0], dtype=torch.float64)
    got = want.clone()
    got[0] += 3e-9  # far above float64's tolerance, invisible at six digits
    with pytest.raises(Failure) as e:
        assert_close(got, want, name="the bias gradient")
    text = str(e.value)
    g, w = text.split("got ")[1].split(", expected ")
    g, w = g.split(" (")[0], w.rstrip(".")
    assert g != w and float(g) != float(w), text
    assert "a difference of 3e-09, above the tolerance" in text, text
    with pytest.raises(Failure) as e:
        assert_close(0.08575561234567 + 3e-9, 0.08575561234567, name="the loss")
    assert "expected value (0.08575561)" in str(e.value) and "a difference of 3e-09" in str(e.value), str(e.value)
    # a difference visible at six digits reads as before
    with pytest.raises(Failure, match=r"got 2, expected 1\.$"):
        assert_close(torch.tensor([2.0, 0.0], dtype=torch.float64), torch.tensor([1.0, 0.0], dtype=torch.float64))


def test_a_misconception_is_named_only_when_no_other_one_matches_too():
    """Issue 23: two known mistakes that give the same value on these inputs name neither (the evidence does not
    say which); NaN where a mistake gives NaN is part of its footprint; no cause is guessed for a NaN."""
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    both = {"unscaled": ("Backpropagated unscaled.", x * 2), "sums_outputs": ("Summed the outputs.", x * 2)}
    with pytest.raises(Failure) as e:
        assert_close(x * 2, x, misconceptions=both)
    assert e.value.misconception == "" and "unscaled" not in str(e.value).lower(), str(e.value)
    y = torch.tensor([-1.0, 2.0], dtype=torch.float64)
    root = {"root": ("A fractional power of a negative output.", 3 * (y ** 3) ** (2 / 3))}
    with pytest.raises(Failure) as e:
        assert_close(3 * (y ** 3) ** (2 / 3), 3 * y ** 2, misconceptions=root)
    assert e.value.misconception == "root" and "overflow" not in str(e.value), str(e.value)
    with pytest.raises(Failure) as e:
        assert_close(torch.tensor([float("nan"), 1.0], dtype=torch.float64), x)
    assert e.value.misconception == "" and "usual sources" in str(e.value), str(e.value)


# ---------------------------------------------------------------- NaN never passes a comparison (issue 22)
NAN = float("nan")


@pytest.mark.parametrize("condition", [NAN, np.float64("nan"), torch.tensor(NAN), torch.tensor([NAN])])
def test_check_never_holds_for_a_nan(condition):
    with pytest.raises(Failure):
        check(condition, "nan")


@pytest.mark.parametrize("expected", [1.0, NAN])
def test_assert_close_refuses_a_nan_scalar(expected):
    with pytest.raises(Failure):
        assert_close(NAN, expected)


@pytest.mark.parametrize("expected", [torch.tensor([1.0, 2.0]), torch.tensor([1.0, NAN])])
def test_assert_close_refuses_a_nan_entry_even_where_nan_was_expected(expected):
    with pytest.raises(Failure):
        assert_close(torch.tensor([1.0, NAN]), expected.double(), check_dtype=False)


def test_assert_close_accepts_nan_only_when_asked():
    assert_close(torch.tensor([1.0, NAN]), torch.tensor([1.0, NAN]), equal_nan=True)


@pytest.mark.parametrize("value, ok", [(1.0, True), (1.0 + 1e-3, False), (NAN, False), (float("inf"), False),
                                       ("1.0", False), (True, False), (10**400, False)])
def test_within_is_nan_safe(value, ok):
    from autograder.judge import within

    assert within(value, 1.0, rtol=1e-6) is ok


def test_misconceptions_are_compared_only_once_a_check_has_failed():
    """A passing result never pays for the diagnosis (issue 25: noisy_digits built it for every correct image)."""
    import torch

    from autograder.errors import Failure
    from autograder.judge.feedback import assert_close

    class Counting(dict):
        asked = 0

        def items(self):
            Counting.asked += 1
            return super().items()

    wrong = Counting({"doubled": ("Everything was doubled.", torch.tensor([2.0, 4.0]))})
    assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]), misconceptions=wrong)
    assert Counting.asked == 0
    try:
        assert_close(torch.tensor([2.0, 4.0]), torch.tensor([1.0, 2.0]), misconceptions=wrong, hint="Look again.")
    except Failure as e:
        assert e.misconception == "doubled" and "Everything was doubled." in str(e) and "Look again" not in str(e)
    else:
        raise AssertionError("a wrong result passed")
    assert Counting.asked == 1


def test_misconceptions_given_as_a_function_are_built_only_for_a_wrong_result():
    import torch

    from autograder.errors import Failure
    from autograder.judge.feedback import assert_close

    built = []

    def wrong():
        built.append(1)
        return {"halved": ("Everything was halved.", torch.tensor([0.5, 1.0]))}

    assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]), misconceptions=wrong)
    assert_close(3.0, 3.0, misconceptions=wrong)
    assert not built
    for actual, expected in ((torch.tensor([0.5, 1.0]), torch.tensor([1.0, 2.0])), (0.5, 1.0)):
        with pytest.raises(Failure) as info:
            assert_close(actual, expected, misconceptions=lambda e=expected: {"halved": ("Halved.", e / 2)})
        assert info.value.misconception == "halved"
    with pytest.raises(Failure) as info:
        assert_close(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 2.0]), misconceptions=wrong)
    assert built == [1] and "Everything was halved." in str(info.value)
