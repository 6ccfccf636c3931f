# misconception: float64_image
"""Builds the image from the float64 NumPy data and never casts: the image is float64
instead of float32."""

import numpy as np
import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.X = np.asarray(X, dtype=np.float64)
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        clean = torch.from_numpy(self.X[i].reshape(1, 8, 8) / 16)
        noise = torch.randn(1, 8, 8, dtype=torch.float64)
        return (clean + self.sigma * noise).clamp(0, 1), self.labels[i]
