# misconception: modifies_input
"""Normalises the caller's array in place (X /= 16) and keeps a reference to it: the
caller's X is modified."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        X /= 16
        self.X = X
        self.y = y
        self.sigma = sigma

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        clean = torch.from_numpy(self.X[i]).float().reshape(1, 8, 8)
        return (clean + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), torch.tensor(int(self.y[i]))
