import torch
import torch.nn.functional as F


def mlp_forward(X, W1, b1, W2, b2):
    raise NotImplementedError


def mlp_backward(X, y, W1, b1, W2, b2):
    raise NotImplementedError


class MLPLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, y, W1, b1, W2, b2):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError


def mlp_loss(X, y, W1, b1, W2, b2):
    raise NotImplementedError
