"""Works in float64 with torch.normal(0, sigma) of shape (64,), clips with minimum/maximum,
reshapes and casts to float32 at the end; stores the data lazily (keeps references,
never writes to them)."""

import numpy as np
import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.X = X
        self.y = y
        self.sigma = sigma

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        pixels = torch.as_tensor(np.asarray(self.X[i], dtype=np.float64)) / 16
        noisy = pixels + torch.normal(0.0, 1.0, size=(64,), dtype=torch.float64) * self.sigma
        noisy = torch.maximum(torch.minimum(noisy, torch.ones(())), torch.zeros(()))
        label = torch.as_tensor(self.y[i]).to(torch.int64).reshape(())
        return noisy.reshape(1, 8, 8).to(torch.float32), label
