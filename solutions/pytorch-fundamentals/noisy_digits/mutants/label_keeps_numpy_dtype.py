# misconception: label_dtype
"""Converts the label with torch.from_numpy / as_tensor, which keeps the array's integer
dtype (int32 labels stay int32 instead of int64)."""

import numpy as np
import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
        self.labels = torch.from_numpy(np.array(y))
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return (self.images[i] + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), self.labels[i]
