# misconception: by_hand
"""Misconception: computes the intermediate gradient by hand (4 * w) instead of obtaining it
from autograd, which is the point of the exercise."""


def intermediate_grad(w):
    return 4 * w.detach()
