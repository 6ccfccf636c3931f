"""What the sandbox says about a failure: the student's, or the grader's own."""

from __future__ import annotations

import pytest

from autograder.sandbox.describe import grader_fault

torch = pytest.importorskip("torch")


class _Digits(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 4


def test_a_students_error_in_a_dataloader_worker_is_the_students():
    """Found by mutation analysis (issue 44): a NameError in a student's __getitem__, raised in a DataLoader
    worker, reaches the probe as text, with no student frame; it was reported as the grader's own bug."""
    code = compile("def get(i):\n    return clean[i]\n", "<cell 3>", "exec")  # `clean` is undefined
    scope: dict = {}
    exec(code, scope)
    _Digits.__getitem__ = lambda self, i: scope["get"](i)  # a frame in the student's cell, in the worker
    loader = torch.utils.data.DataLoader(_Digits(), batch_size=1, num_workers=1)
    with pytest.raises(NameError) as e:
        next(iter(loader))
    assert "DataLoader worker process" in str(e.value) and '"<cell 3>"' in str(e.value)
    assert not grader_fault(e.value)
    # the same kind of error in the grader's own code, with no cell anywhere, stays the grader's
    try:
        undefined_in_probe  # noqa: B018, F821
    except NameError as own:
        assert grader_fault(own)
