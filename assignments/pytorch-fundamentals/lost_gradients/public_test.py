"""Public tests for `lost_gradients` (the hidden suite checks much more)."""
import torch
import torch.nn.functional as F

from autograder.judge import assert_close, check, remote_meta


def test_make_leaf_is_leaf(student):
    """make_leaf((2, 3)) is a float32 leaf requiring grad"""
    t = student.make_leaf((2, 3))
    check(isinstance(t, torch.Tensor), f"make_leaf should return a tensor, got {type(t).__name__}.")
    check(tuple(t.shape) == (2, 3), f"make_leaf((2, 3)) returned shape {tuple(t.shape)}.")
    meta = remote_meta(t)
    check(meta["requires_grad"], "make_leaf((2, 3)) does not require grad.")
    check(meta["is_leaf"], "make_leaf((2, 3)) is not a leaf tensor.")


def test_make_leaf_float64(student):
    """make_leaf((4,), dtype=torch.float64) is a float64 leaf requiring grad"""
    t = student.make_leaf((4,), dtype=torch.float64)
    check(isinstance(t, torch.Tensor), f"make_leaf should return a tensor, got {type(t).__name__}.")
    check(t.dtype == torch.float64, f"make_leaf((4,), dtype=torch.float64) has dtype {t.dtype}.")
    meta = remote_meta(t)
    check(meta["requires_grad"], "make_leaf((4,), dtype=torch.float64) does not require grad.")
    check(meta["is_leaf"], "make_leaf((4,), dtype=torch.float64) is not a leaf tensor.")


def test_diagnose_shape(student):
    """diagnose returns a dict over snippets 1, 2, 3"""
    d = student.diagnose()
    check(isinstance(d, dict) and set(d) == {1, 2, 3},
          f"diagnose() should return a dict with int keys 1, 2, 3; got {d!r}.")


def test_training_loss_small(student):
    """training_loss on a small batch"""
    logits = torch.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 2.0]])
    target = torch.tensor([0, 2])
    assert_close(student.training_loss(logits, target), F.cross_entropy(logits, target),
                 rtol=1e-6, atol=1e-6, name="training_loss on a 2x3 batch")
