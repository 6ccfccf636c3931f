# misconception: shuffled
"""Misconception: the micro-batches come from DataLoader(TensorDataset(X, Y), batch_size=m, shuffle=True): every
example is used once, but not in order (the contract asks for X[0:m], X[m:2m], ... in order)."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    n = len(X)
    for xb, yb in DataLoader(TensorDataset(X, Y), batch_size=micro_batch_size, shuffle=True):
        loss = loss_fn(model(xb), yb) * (len(xb) / n)
        loss.backward()
