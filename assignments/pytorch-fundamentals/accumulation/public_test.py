"""Public tests of `accumulation` (the graded suite is hidden and more thorough)."""
import torch
import torch.nn.functional as F

from autograder.judge import assert_close, check


def test_linear_model_matches_full_batch(student, sandbox):
    """A linear model: accumulated gradient equals the full-batch gradient"""
    torch.manual_seed(0)
    X = torch.randn(6, 3, dtype=torch.float64)
    Y = torch.randn(6, 1, dtype=torch.float64)
    model = sandbox.ref("torch.nn.Linear")(3, 1).double()   # lives in the sandbox
    W = model.weight.detach()
    b = model.bias.detach()
    student.accumulate_gradients(model, X, Y, 2)
    w = W.clone().requires_grad_(True)
    c = b.clone().requires_grad_(True)
    F.mse_loss(X @ w.T + c, Y).backward()
    attrgetter = sandbox.ref("operator.attrgetter")        # reads attributes sandbox-side
    assert_close(attrgetter("weight.grad")(model), w.grad, rtol=1e-9, atol=1e-12,
                 name="weight.grad")
    assert_close(attrgetter("bias.grad")(model), c.grad, rtol=1e-9, atol=1e-12,
                 name="bias.grad")


def test_unscaled_factor_example(student):
    """unscaled_factor(32, 8)"""
    got = student.unscaled_factor(32, 8)
    check(isinstance(got, (int, float)) and abs(got - 4.0) < 1e-9,
          f"unscaled_factor(32, 8) returned {got!r}: four unscaled micro-batch means are "
          f"summed, so the gradient is 4 times too large.")
