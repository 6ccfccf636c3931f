# misconception: contiguous_first
"""Calls .contiguous() before .view(-1): correct values but copies strided inputs whose
layout already allows a flat view."""


def flatten_any(x):
    return x.contiguous().view(-1)
