"""Averages the columns (dim=0) instead of the rows."""
# misconception: averages_columns
import torch


def double(x):
    return x * 2


def row_means(x):
    return x.mean(dim=0)
