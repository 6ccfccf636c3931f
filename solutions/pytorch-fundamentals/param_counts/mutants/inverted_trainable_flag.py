# misconception: inverted_flag
"""Misconception: the requires_grad test is inverted: trainable_only=True counts the frozen parameters (and
trainable_only=False only the trainable ones)."""


def count_parameters(model, trainable_only=True):
    return sum(p.numel() for p in model.parameters() if p.requires_grad != trainable_only)
