import numpy as np
import torch
from torch.utils.data import Dataset


class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        # torch.tensor copies, so the caller's arrays are never touched.
        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
        self.labels = torch.tensor(y, dtype=torch.int64)
        self.sigma = sigma

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        clean = self.images[i]
        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
