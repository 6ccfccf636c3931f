# misconception: numpy_noise
"""Draws the noise with NumPy (np.random.normal) instead of torch's global generator:
torch.manual_seed does not make it reproducible."""

import numpy as np
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
        noise = torch.from_numpy(np.random.normal(size=(1, 8, 8)).astype(np.float32))
        return (self.images[i] + self.sigma * noise).clamp(0, 1), self.labels[i]
