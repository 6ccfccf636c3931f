import random

import numpy as np
import torch
from torch.utils.data import DataLoader


def reseeded_reads(mod, X, y, sigma, i, plan):
    ds = mod.NoisyDigits(X, y, sigma)
    images = []
    for torch_seed, other_seed in plan:
        torch.manual_seed(torch_seed)
        np.random.seed(other_seed)
        random.seed(other_seed)
        images.append(ds[i][0])
    return images


def loader_reads(mod, X, y, sigma, i, n_reads, num_workers, seed):
    ds = mod.NoisyDigits(X, y, sigma)
    torch.manual_seed(seed)
    loader = DataLoader(ds, batch_size=1, sampler=[i] * n_reads, num_workers=num_workers)
    return [image[0] for image, _ in loader]


def arrays_after_use(mod, X, y, sigma, idxs):
    ds = mod.NoisyDigits(X, y, sigma)
    for i in idxs:
        ds[i]
    len(ds)
    return X, y


def _layout(a, layout):
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "strided":
        return np.repeat(a, 2, axis=0)[::2]
    return a


def items_many(mod, specs):
    out = []
    for X, y, sigma, layout in specs:
        X, y = _layout(X, layout), (_layout(y[:, None], layout)[:, 0] if layout == "strided" else y)
        try:
            ds = mod.NoisyDigits(X, y, sigma)
            n = len(ds)
            items = [ds[i] for i in range(len(X))]
            out.append({"len": n, "items": items, "X": X, "y": y})
        except NotImplementedError:
            raise
        except Exception as e:
            out.append({"error": f"{type(e).__name__}: {e}"})
    return out
