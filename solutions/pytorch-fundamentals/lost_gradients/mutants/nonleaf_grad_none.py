# misconception: not_retained
"""Misconception: reads .grad of the non-leaf w2 without retain_grad(): autograd does not
keep it, so None comes back."""


def intermediate_grad(w):
    w2 = w * 2
    loss = (w2**2).sum()
    loss.backward()
    return w2.grad
