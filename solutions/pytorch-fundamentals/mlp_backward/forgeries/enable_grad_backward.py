# twin: uses_autograd_inside
# forges: test_backward_without_autograd
"""mlp_backward turns gradient recording back on with torch.enable_grad(), undoing the judge's no_grad(),
and lets autograd compute every gradient."""
import torch
import torch.nn.functional as F


def mlp_backward(X, y, W1, b1, W2, b2):
    with torch.enable_grad():
        ws = [t.detach().clone().requires_grad_(True) for t in (W1, b1, W2, b2)]
        loss = F.cross_entropy(torch.relu(X @ ws[0] + ws[1]) @ ws[2] + ws[3], y)
        grads = torch.autograd.grad(loss, ws)
    return {k: g.detach() for k, g in zip(("W1", "b1", "W2", "b2"), grads)}
