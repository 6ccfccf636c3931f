import torch


def double(x):
    return x + x


def row_means(x):
    return x.sum(dim=-1) / x.shape[-1]
