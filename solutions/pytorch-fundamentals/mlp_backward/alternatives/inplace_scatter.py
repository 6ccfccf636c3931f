"""Correct: in-place work on freshly allocated tensors only (softmax via exp_ of the shifted
logits, scatter_add_ of -1 at the targets, mul_ by the ReLU mask); the loss from log_softmax and
gather; the Function saves the gradients computed in forward and scales them in backward."""

# torchgrader: whole-file
import torch
import torch.nn.functional as F


def mlp_forward(X, W1, b1, W2, b2):
    H = (X @ W1).add_(b1).clamp_min_(0)
    return (H @ W2).add_(b2)


def _grads(X, y, W1, b1, W2, b2):
    n = X.shape[0]
    A = (X @ W1).add_(b1)
    H = A.clamp_min(0)
    Z = (H @ W2).add_(b2)
    P = Z.sub_(Z.max(dim=1, keepdim=True).values).exp_()
    P.div_(P.sum(dim=1, keepdim=True))
    P.scatter_add_(1, y.view(-1, 1), torch.full((n, 1), -1.0, dtype=P.dtype))
    dZ = P.div_(n)
    dA = (dZ @ W2.T).mul_((A > 0).to(dZ.dtype))
    return {"W1": X.T @ dA, "b1": dA.sum(0), "W2": H.T @ dZ, "b2": dZ.sum(0)}


def mlp_backward(X, y, W1, b1, W2, b2):
    return _grads(X, y, W1, b1, W2, b2)


class SavedGradLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        g = _grads(X, y, W1, b1, W2, b2)
        ctx.save_for_backward(g["W1"], g["b1"], g["W2"], g["b2"])
        logp = F.log_softmax(mlp_forward(X, W1, b1, W2, b2), dim=1)
        return -logp.gather(1, y.view(-1, 1)).mean()

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, *(grad_output * t for t in ctx.saved_tensors))


def mlp_loss(X, y, W1, b1, W2, b2):
    return SavedGradLoss.apply(X, y, W1, b1, W2, b2)
