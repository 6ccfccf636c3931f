# misconception: divides_by_max
"""Normalises by the largest value present in X (X / X.max()) instead of by 16: identical on
load_digits, where some pixel is always 16, wrong on data whose pixels never reach 16."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        X = torch.tensor(X, dtype=torch.float32)
        self.images = (X / X.max()).reshape(-1, 1, 8, 8)
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        clean = self.images[i]
        return (clean + self.sigma * torch.randn(clean.shape)).clamp(0.0, 1.0), self.labels[i]
