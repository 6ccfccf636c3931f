# misconception: divides_by_row_max
"""Normalises every image by its own brightest pixel (per-image min-max style) instead of by
16: faint digits are stretched to full brightness."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        X = torch.tensor(X, dtype=torch.float32)
        row_max = X.max(dim=1, keepdim=True).values.clamp(min=1e-12)
        self.images = (X / row_max).reshape(-1, 1, 8, 8)
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        clean = self.images[i]
        return (clean + self.sigma * torch.randn(clean.shape)).clamp(0.0, 1.0), self.labels[i]
