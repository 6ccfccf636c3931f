"""Public tests for `mlp_backward` (the hidden suite checks much more)."""
import torch
import torch.nn.functional as F

from autograder.judge import assert_close, check

KEYS = ("W1", "b1", "W2", "b2")


def _problem():
    g = torch.Generator().manual_seed(2024)
    X = torch.randn(4, 3, generator=g, dtype=torch.float64)
    W1 = torch.randn(3, 5, generator=g, dtype=torch.float64)
    b1 = torch.randn(5, generator=g, dtype=torch.float64)
    W2 = torch.randn(5, 3, generator=g, dtype=torch.float64)
    b2 = torch.randn(3, generator=g, dtype=torch.float64)
    y = torch.tensor([0, 2, 1, 2])
    return X, y, W1, b1, W2, b2


def test_forward_small(student):
    """mlp_forward on a small float64 problem"""
    X, y, W1, b1, W2, b2 = _problem()
    assert_close(student.mlp_forward(X, W1, b1, W2, b2), torch.relu(X @ W1 + b1) @ W2 + b2,
                 rtol=1e-10, atol=1e-12, name="mlp_forward")


def test_backward_small(student):
    """mlp_backward agrees with autograd on a small float64 problem"""
    X, y, W1, b1, W2, b2 = _problem()
    got = student.mlp_backward(X, y, W1, b1, W2, b2)
    check(isinstance(got, dict) and set(got) == set(KEYS),
          f"mlp_backward should return a dict with keys {KEYS}.")
    ws = [t.clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
    loss = F.cross_entropy(torch.relu(X @ ws[0] + ws[1]) @ ws[2] + ws[3], y)
    for k, e in zip(KEYS, torch.autograd.grad(loss, ws)):
        assert_close(got[k], e, rtol=1e-10, atol=1e-12, name=f"gradient for {k}")


def test_loss_value_small(student):
    """mlp_loss gives the mean cross-entropy"""
    X, y, W1, b1, W2, b2 = _problem()
    expected = F.cross_entropy(torch.relu(X @ W1 + b1) @ W2 + b2, y)
    assert_close(student.mlp_loss(X, y, W1, b1, W2, b2), expected, rtol=1e-10, atol=1e-12,
                 name="mlp_loss")
