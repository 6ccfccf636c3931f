"""Public tests for lr_scaling. The hidden suite tries many values and types."""


def test_effective_batch_example(student):
    """effective_batch(32, 4) is 128"""
    got = student.effective_batch(32, 4)
    assert got == 128, f"effective_batch(32, 4) returned {got!r}, expected 128"


def test_scaled_lr_example(student):
    """scaled_lr(0.1, 32, 8, 256) is 0.1"""
    got = student.scaled_lr(0.1, 32, 8, 256)
    assert abs(got - 0.1) < 1e-12, f"scaled_lr(0.1, 32, 8, 256) returned {got!r}, expected 0.1"
