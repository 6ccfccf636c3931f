# misconception: noise_in_init
"""Draws the noise once in __init__ (a fixed noisy copy of the data): every access to ds[i]
returns the same image, and DataLoader workers all see identical noise."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        clean = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
        self.images = (clean + sigma * torch.randn(clean.shape)).clamp(0, 1)
        self.labels = torch.tensor(y, dtype=torch.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]
