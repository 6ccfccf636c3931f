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


def _on_a_leaf(sandbox, fn, values):
    """fn(w) for w a leaf requiring grad built where your code runs (a tensor sent from here arrives without
    requires_grad): map() applies requires_grad_ and then fn inside the sandbox."""
    make = sandbox.ref("builtins.map")(sandbox.ref("torch.Tensor.requires_grad_"), [torch.tensor(values)])
    return next(iter(sandbox.ref("builtins.map")(fn, make)))


def test_intermediate_grad_small(student, sandbox):
    """intermediate_grad on a small leaf vector requiring grad"""
    values = [0.5, -1.0, 2.0]
    got = _on_a_leaf(sandbox, student.intermediate_grad, values)
    check(got is not None, "intermediate_grad(w) returned None: a non-leaf such as w2 keeps no .grad unless asked.")
    assert_close(got, 4 * torch.tensor(values), rtol=1e-6, atol=1e-6,
                 name="intermediate_grad(w), the gradient of (w2 ** 2).sum() with respect to w2 = w * 2")
