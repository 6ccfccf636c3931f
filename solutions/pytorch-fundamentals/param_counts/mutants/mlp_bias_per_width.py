"""Misconception: mlp_param_count adds a bias for every width in sizes, the input layer included."""
# misconception: mlp_bias_every_width

import torch
from torch import nn


def mlp_param_count(sizes):
    return sum(a * b for a, b in zip(sizes[:-1], sizes[1:])) + sum(sizes)
