
from autograder.judge import check


def test_counter_starts(student):
    """Counter(3).total is 3"""
    check(student.Counter(3).total == 3, "Counter(3) should start with total == 3.")
