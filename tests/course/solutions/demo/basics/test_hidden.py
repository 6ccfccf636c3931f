import pytest
import torch

from autograder.judge import assert_close, check, shares_storage


@pytest.mark.points(1)
def test_double_values(student):
    """double(x) doubles every entry"""
    x = torch.randn(4, 3, dtype=torch.float64)
    assert_close(student.double(x), 2 * x, name="double(x)",
                 misconceptions={"squares": ("You squared the values instead of doubling them.", x * x)})


@pytest.mark.points(1)
def test_double_keeps_input(student):
    """double(x) leaves x unchanged"""
    x = torch.randn(5)
    call = student.call_detailed("double", x)
    check(torch.equal(call.args[0], x), "double(x) modified its input in place: return a new tensor.")
    check(not shares_storage(call.value, call.args[0]), "double(x) returned its input (modified in place).")


@pytest.mark.points(2)
def test_row_means(student):
    """row_means(x) averages each row"""
    x = torch.randn(3, 7, dtype=torch.float64)
    assert_close(student.row_means(x), x.mean(dim=1), name="row_means(x)",
                 misconceptions={"averages_columns": ("You averaged columns (dim=0) instead of rows.", x.mean(dim=0))})
