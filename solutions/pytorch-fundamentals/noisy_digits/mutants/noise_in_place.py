# misconception: noise_accumulates
"""Misconception: the noise is added in place to the stored image (self.images[i] += ...), so it builds up over
reads instead of being fresh noise on the clean image."""
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
        image = self.images[i]
        image += self.sigma * torch.randn(image.shape)
        return image.clamp(0.0, 1.0), self.labels[i]
