# misconception: not_torch_generator
"""Misconception: draws the values with NumPy's generator, so torch.manual_seed does not make
make_leaf reproducible (the values do not follow torch's global generator)."""

import numpy as np
import torch


def make_leaf(shape, device="cpu", dtype=torch.float32):
    values = np.random.randn(*shape)
    return torch.from_numpy(values).to(device=device, dtype=dtype).requires_grad_()
