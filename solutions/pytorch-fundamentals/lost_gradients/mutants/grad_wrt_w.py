# misconception: grad_wrt_leaf
"""Misconception: returns the gradient with respect to the leaf w (w.grad) instead of the
intermediate w2 = w * 2; the chain rule makes it twice too large."""


def intermediate_grad(w):
    w2 = w * 2
    loss = (w2**2).sum()
    loss.backward()
    return w.grad
