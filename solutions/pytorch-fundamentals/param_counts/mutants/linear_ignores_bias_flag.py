"""Misconception: linear_param_count always adds the bias, ignoring bias=False."""
# misconception: ignores_bias_flag

import torch
from torch import nn


def linear_param_count(d_in, d_out, bias=True):
    return d_in * d_out + d_out
