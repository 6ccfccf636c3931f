"""Misconception: counts the entries of state_dict(), which include buffers (BatchNorm running
statistics, num_batches_tracked) and list tied weights under every name."""
# misconception: counts_state_dict, counts_buffers

import torch
from torch import nn


def count_parameters(model, trainable_only=True):
    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
    # buffers are not parameters.
    sd = model.state_dict(keep_vars=True)
    return sum(t.numel() for t in sd.values()
               if not trainable_only or t.requires_grad or not isinstance(t, nn.Parameter))
