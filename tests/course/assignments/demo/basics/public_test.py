import torch

from autograder.judge import assert_close


def test_double_small(student):
    """double of a small vector"""
    assert_close(student.double(torch.tensor([1.0, 2.0])), torch.tensor([2.0, 4.0]), name="double(x)")
