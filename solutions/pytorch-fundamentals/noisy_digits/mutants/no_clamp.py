# misconception: no_clamp
"""Forgets to clamp: noisy pixels leave the [0, 1] range."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i] + self.sigma * torch.randn(1, 8, 8), self.labels[i]
