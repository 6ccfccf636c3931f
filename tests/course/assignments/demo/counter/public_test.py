import pytest

from autograder.judge import check


@pytest.mark.points(0)
def test_counter_starts(student):
    """Counter(3).total is 3"""
    check(student.Counter(3).total == 3, "Counter(3) should start with total == 3.")
