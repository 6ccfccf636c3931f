import torch


def double(x):
    raise NotImplementedError


def row_means(x):
    raise NotImplementedError
