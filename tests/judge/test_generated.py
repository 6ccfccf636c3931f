"""Judge-side generated inputs: the same for every submission, drawn once per judge process."""

from __future__ import annotations

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


SHAPES = st.tuples(st.integers(1, 6), st.integers(1, 6), st.lists(st.integers(0, 9), min_size=1, max_size=4))


def test_a_draw_is_reproducible_and_each_caller_gets_its_own_copy():
    first = draw(SHAPES, 15, "test/shapes v1")
    first[0][2].append("changed by a test")  # a test that mutates its inputs
    second = draw(SHAPES, 15, "test/shapes v1")
    assert len(second) == 15 and "changed by a test" not in second[0][2]
    assert second == draw(SHAPES, 15, "test/shapes v1")
    assert second != draw(SHAPES, 15, "test/shapes v2")  # the label is the seed


def test_another_strategy_under_the_same_label_is_drawn_from_not_served_from_the_cache():
    small = draw(st.integers(0, 3), 10, "test/reused label")
    big = draw(st.integers(100, 200), 10, "test/reused label")
    assert all(0 <= v <= 3 for v in small) and all(100 <= v <= 200 for v in big)
