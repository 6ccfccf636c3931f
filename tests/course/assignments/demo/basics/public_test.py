import torch

from autograder.judge import assert_close


def test_double_small(student):
    """double of a small vector"""
    assert_close(student.double(torch.tensor([1.0, 2.0])), torch.tensor([2.0, 4.0]), name="double(x)")
    x = torch.tensor([[1.0, 3.0], [0.0, 4.0]])  # every function of the exercise has a value checked publicly
    assert_close(student.row_means(x), torch.tensor([2.0, 2.0]), name="row_means(x)")
