"""Keeps a float32 NumPy copy, converts per access with from_numpy, draws randn_like,
clamps with torch.clamp; the label is built from a Python int."""

import numpy as np
import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.X = np.array(X, dtype=np.float32, copy=True)
        self.y = np.array(y, copy=True)
        self.sigma = float(sigma)

    def __len__(self):
        return self.X.shape[0]

    def __getitem__(self, i):
        base = torch.from_numpy(self.X[i].reshape(1, 8, 8).copy()) / 16.0
        image = torch.clamp(base + self.sigma * torch.randn_like(base), min=0.0, max=1.0)
        label = torch.tensor(int(self.y[i]))
        return image, label
