# misconception: no_reduce
"""Misconception: each rank's own mean is already the metric."""


def global_mean(numerator, denominator):
    return numerator / denominator
