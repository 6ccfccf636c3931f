# misconception: relu_on_logits
"""Misconception: applies ReLU after the output layer too (logits must stay unconstrained)."""

import torch


def mlp_forward(X, W1, b1, W2, b2):
    A = X @ W1 + b1
    H = torch.relu(A)
    return torch.relu(H @ W2 + b2)
