"""Trusted sandbox-side harness for `noisy_digits` (no expected answers here)."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader


def reseeded_reads(mod, X, y, sigma, i, plan):
    """Build the dataset, then for each (torch_seed, other_seed) in `plan` seed torch with
    the first and NumPy/random with the second and read ds[i]; return the images."""
    ds = mod.NoisyDigits(X, y, sigma)
    images = []
    for torch_seed, other_seed in plan:
        torch.manual_seed(torch_seed)
        np.random.seed(other_seed)
        random.seed(other_seed)
        images.append(ds[i][0])
    return images


def loader_reads(mod, X, y, sigma, i, n_reads, num_workers, seed):
    """Read index i n_reads times through a DataLoader with worker processes."""
    ds = mod.NoisyDigits(X, y, sigma)
    torch.manual_seed(seed)
    loader = DataLoader(ds, batch_size=1, sampler=[i] * n_reads, num_workers=num_workers)
    return [image[0] for image, _ in loader]


def arrays_after_use(mod, X, y, sigma, idxs):
    """Construct the dataset, read some items, and hand back the caller's arrays as they are now."""
    ds = mod.NoisyDigits(X, y, sigma)
    for i in idxs:
        ds[i]
    len(ds)
    return X, y
