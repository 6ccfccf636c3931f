import pytest

from autograder.judge import check


@pytest.mark.points(1)
def test_counter_handle(student):
    """Counter keeps a running total"""
    c = student.Counter(5)
    c.add(2)
    check(c.add(3) == 10, "Counter(5).add(2).add(3) should reach 10.")
    check(c.total == 10, "Counter.total should be the running total.")


@pytest.mark.points(1)
def test_counter_probe(sandbox):
    """Counter driven by a probe"""
    check(sandbox.probe("count_to", 4) == 7, "Counter(1) after add(0..3) should be 7.")
