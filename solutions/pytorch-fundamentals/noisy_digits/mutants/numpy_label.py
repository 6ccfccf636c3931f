# misconception: numpy_label
"""Returns the label as it comes from the NumPy array (a NumPy integer), not as a 0-d int64
tensor."""

import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
        self.y = y
        self.sigma = sigma

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return (self.images[i] + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), self.y[i]
