"""Squares the values instead of doubling them."""
# misconception: squares
import torch


def double(x):
    return x * x


def row_means(x):
    return x.mean(dim=1)
