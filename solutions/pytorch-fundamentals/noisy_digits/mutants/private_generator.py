# misconception: private_generator
"""Uses a private torch.Generator created in __init__: torch.manual_seed does not reproduce
it, and forked DataLoader workers inherit identical generator states (identical noise)."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma
        self.gen = torch.Generator().manual_seed(1234)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        noise = torch.randn(1, 8, 8, generator=self.gen)
        return (self.images[i] + self.sigma * noise).clamp(0, 1), self.labels[i]
