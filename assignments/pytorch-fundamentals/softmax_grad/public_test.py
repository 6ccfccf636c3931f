"""Public tests of `softmax_grad` (the graded suite is hidden and more thorough)."""
import torch
import torch.nn.functional as F

from autograder.judge import assert_close, check


def _autograd_grad(logits, target):
    z = logits.clone().requires_grad_(True)
    F.cross_entropy(z, target).backward()
    return z.grad


def test_small_batch_matches_autograd(student):
    """A (2, 3) float64 batch matches autograd"""
    logits = torch.tensor([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
    target = torch.tensor([2, 1])
    assert_close(student.softmax_ce_grad(logits, target), _autograd_grad(logits, target),
                 rtol=1e-10, atol=1e-13, name="softmax_ce_grad on a (2, 3) batch")


def test_unbatched_matches_autograd(student):
    """Unbatched (C,) logits with a 0-d target match autograd"""
    logits = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    target = torch.tensor(0)
    assert_close(student.softmax_ce_grad(logits, target), _autograd_grad(logits, target),
                 rtol=1e-10, atol=1e-13, name="softmax_ce_grad on (4,) logits")


def test_large_logits_are_finite(student):
    """Logits around 1e3 give a finite gradient"""
    logits = torch.tensor([[1000.0, 0.0], [-1000.0, 999.0]], dtype=torch.float64)
    got = student.softmax_ce_grad(logits, torch.tensor([0, 0]))
    check(torch.isfinite(got).all(), "the gradient on logits of size 1e3 contains nan or inf: "
                                     "exp of a large number overflows.")
