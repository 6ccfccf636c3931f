# twin: by_hand
# forges: test_intermediate_grad_uses_autograd
"""intermediate_grad runs torch.autograd.grad, then overwrites the gradient's storage in place with a
hand-derived 4 * w: an origin marker that follows storages, not contents, still says "autograd"."""
import torch


def intermediate_grad(w):
    w2 = w * 2
    (g,) = torch.autograd.grad((w2**2).sum(), w2)
    with torch.no_grad():
        g.copy_(4 * w.detach())
    return g
