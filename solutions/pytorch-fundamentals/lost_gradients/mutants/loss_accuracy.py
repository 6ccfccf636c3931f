# misconception: accuracy_loss
"""Misconception: trains on 1 - accuracy built from argmax, which has no gradient."""


def training_loss(logits, target):
    acc = (logits.argmax(dim=1) == target).to(logits.dtype).mean()
    return (1 - acc).requires_grad_()
