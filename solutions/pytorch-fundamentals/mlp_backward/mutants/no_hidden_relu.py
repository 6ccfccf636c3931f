# misconception: no_hidden_relu
"""Misconception: mlp_forward leaves out the ReLU between the layers (two linear layers in a row)."""


def mlp_forward(X, W1, b1, W2, b2):
    return (X @ W1 + b1) @ W2 + b2
