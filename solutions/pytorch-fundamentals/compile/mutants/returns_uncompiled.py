"""Misconception: returns the model itself (never compiled), so nothing is
recompiled because nothing is compiled."""
# misconception: not_compiled

import torch
import torch.nn as nn


def compile_dynamic(model):
    return model
