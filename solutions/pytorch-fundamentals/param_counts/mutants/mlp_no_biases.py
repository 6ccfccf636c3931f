"""Misconception: mlp_param_count counts the weight matrices only and forgets the biases."""
# misconception: mlp_no_biases

import torch
from torch import nn


def mlp_param_count(sizes):
    return sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
