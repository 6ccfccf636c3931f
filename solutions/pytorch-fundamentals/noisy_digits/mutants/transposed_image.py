# misconception: transposed
"""Misconception: NoisyDigits lays the 64 pixel values out column by column (the 8x8 image transposed)."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.images = (torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16).transpose(2, 3).contiguous()
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        clean = self.images[i]
        noise = torch.randn(clean.shape)
        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
