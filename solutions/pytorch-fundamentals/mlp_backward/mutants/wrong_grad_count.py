# misconception: backward_arity
"""Misconception: the custom Function's backward returns gradients only for the weights, not one
entry (None allowed) per forward input."""

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
        return grad_loss * gW1, grad_loss * gb1, grad_loss * gW2, grad_loss * gb2
