# misconception: seeds_per_index
"""Misconception: torch.manual_seed(i) inside __getitem__ "for reproducibility": every access of ds[i] then
draws the same noise."""
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
        torch.manual_seed(i)
        clean = self.images[i]
        noise = torch.randn(clean.shape)
        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
