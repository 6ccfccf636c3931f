# misconception: sum_not_square
"""Misconception: intermediate_grad backpropagates w2.sum() instead of the loss (w2 ** 2).sum(), so the gradient
it returns is all ones."""


def intermediate_grad(w):
    w2 = w * 2
    w2.retain_grad()
    w2.sum().backward()
    return w2.grad
