import torch
import torch.nn as nn


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    """One epoch of mixed-precision training; returns the mean loss per sample."""
    raise NotImplementedError
