"""Public tests of `noisy_digits` (the graded suite is hidden and more thorough)."""
import numpy as np
import torch

from autograder.judge import assert_close, check


def _digits():
    rng = np.random.default_rng(2024)
    X = rng.integers(0, 17, size=(5, 64)).astype(np.float64)   # like load_digits().data
    y = np.array([3, 1, 4, 1, 5])
    return X, y


def test_sigma_zero_gives_scaled_pixels(student):
    """With sigma = 0, ds[i] is (X[i] / 16 as a (1, 8, 8) float32 image, label)"""
    X, y = _digits()
    ds = student.NoisyDigits(X, y, sigma=0.0)
    check(len(ds) == 5, "len(ds) should be the number of rows of X.")
    image, label = ds[2]
    assert_close(image, torch.tensor(X[2] / 16, dtype=torch.float32).reshape(1, 8, 8),
                 rtol=0, atol=1e-7, name="the image of ds[2]")
    check(isinstance(label, torch.Tensor) and label.dtype == torch.int64 and label.dim() == 0
          and int(label) == 4, "the label of ds[2] should be a 0-d int64 tensor equal to y[2].")


def test_noise_is_fresh(student):
    """Two reads of the same index differ"""
    X, y = _digits()
    ds = student.NoisyDigits(X, y, sigma=0.1)
    a, _ = ds[0]
    b, _ = ds[0]
    check(not torch.equal(a, b), "reading ds[0] twice gave the same image: draw the noise at "
                                 "every access.")
