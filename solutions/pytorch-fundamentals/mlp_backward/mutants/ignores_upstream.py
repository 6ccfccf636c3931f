# misconception: ignores_upstream
"""Misconception: the custom Function's backward returns the loss gradients but ignores the
upstream gradient grad_output (fine only for loss.backward() with a unit seed)."""

import torch


class _MLPLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        loss, grads = _forward_backward(X, y, W1, b1, W2, b2)
        ctx.save_for_backward(grads["W1"], grads["b1"], grads["W2"], grads["b2"])
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        gW1, gb1, gW2, gb2 = ctx.saved_tensors
        return None, None, gW1, gb1, gW2, gb2
