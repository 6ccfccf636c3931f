import torch


def mlp_forward(X, W1, b1, W2, b2):
    A = X @ W1 + b1
    H = torch.relu(A)
    return H @ W2 + b2


def _forward_backward(X, y, W1, b1, W2, b2):
    n = X.shape[0]
    A = X @ W1 + b1
    H = torch.relu(A)
    Z = H @ W2 + b2
    Zs = Z - Z.max(dim=1, keepdim=True).values  # stable softmax
    logsumexp = torch.log(torch.exp(Zs).sum(dim=1, keepdim=True))
    logP = Zs - logsumexp
    loss = -logP[torch.arange(n), y].mean()
    dZ = torch.exp(logP)
    dZ[torch.arange(n), y] -= 1
    dZ = dZ / n
    grads = {
        "W2": H.T @ dZ,
        "b2": dZ.sum(dim=0),
    }
    dH = dZ @ W2.T
    dA = dH * (A > 0).to(dH.dtype)
    grads["W1"] = X.T @ dA
    grads["b1"] = dA.sum(dim=0)
    return loss, grads


def mlp_backward(X, y, W1, b1, W2, b2):
    with torch.no_grad():
        _, grads = _forward_backward(X, y, W1, b1, W2, b2)
    return {k: grads[k] for k in ("W1", "b1", "W2", "b2")}


class _MLPLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        loss, grads = _forward_backward(X, y, W1, b1, W2, b2)
        ctx.save_for_backward(grads["W1"], grads["b1"], grads["W2"], grads["b2"])
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        gW1, gb1, gW2, gb2 = ctx.saved_tensors
        return None, None, grad_loss * gW1, grad_loss * gb1, grad_loss * gW2, grad_loss * gb2


def mlp_loss(X, y, W1, b1, W2, b2):
    return _MLPLoss.apply(X, y, W1, b1, W2, b2)
