"""Generated inputs for hidden suites: the same examples for every submission, different per label."""

from hypothesis import strategies as st

from autograder.judge.generated import draw

PAIRS = st.tuples(st.integers(0, 10**6), st.sampled_from(["a", "b", "c"]))


def test_draw_is_reproducible_for_a_label():
    assert draw(PAIRS, 15, "suite v1") == draw(PAIRS, 15, "suite v1")


def test_draw_gives_n_examples_and_other_labels_other_inputs():
    first = draw(PAIRS, 15, "suite v1")
    assert len(first) == 15
    assert len({x for x, _ in first}) > 5, "the examples should vary"
    assert draw(PAIRS, 15, "suite v2") != first
