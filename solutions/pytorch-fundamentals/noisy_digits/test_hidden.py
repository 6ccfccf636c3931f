"""Hidden suite of `noisy_digits` (a dataset with fresh noise).

The contract fixes the distribution of the noise (standard normal per pixel,
from torch's global generator, fresh per access) but not the exact sequence of
draws (shape, dtype, order), so exact values are checked with sigma = 0 and the
noise itself statistically and through reproducibility and freshness.
"""
import numpy as np
import pytest
import torch

from autograder.judge import assert_close, check, describe, fail

RANDOM = range(0, 16)     # rows of random pixels 0..16
MID = range(16, 40)       # rows with every pixel 8: 8 / 16 = 0.5, noise is never clamped
STRIPES = range(40, 64)   # alternating 0 and 16: about half of the noise gets clamped


def _data(dtype=np.float64, label_dtype=np.int64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 17, size=(64, 64)).astype(dtype)
    X[MID.start:MID.stop] = 8
    X[STRIPES.start:STRIPES.stop] = np.tile([0, 16], 32)
    y = rng.integers(0, 10, size=64).astype(label_dtype)
    return X, y


def _item(ds, i, what):
    item = ds[i]
    check(isinstance(item, tuple) and len(item) == 2,
          f"{what} must return a tuple (image, label), got {describe(item)}.")
    return item


def _image(ds, i, what):
    """The image of ds[i] as (1, 8, 8) float64 for analysis. Shape and dtype have their own
    tests, so other tests accept any tensor of 64 values in row-major order."""
    image, _ = _item(ds, i, what)
    return _as_pixels(image, what)


def _as_pixels(image, what):
    check(isinstance(image, torch.Tensor) and image.is_floating_point() and image.numel() == 64,
          f"The image of {what} must be a float32 tensor of shape (1, 8, 8), got "
          f"{describe(image)}.")
    return image.detach().reshape(1, 8, 8).to(torch.float64)


@pytest.mark.points(0.5)
def test_is_a_dataset_with_len(student):
    """NoisyDigits is a Dataset and len(ds) == n"""
    X, y = _data()
    X, y = X[:13].copy(), y[:13].copy()
    ds = student.NoisyDigits(X, y, 0.1)
    check("torch.utils.data.dataset.Dataset" in ds.remote_mro,
          f"NoisyDigits must subclass torch.utils.data.Dataset; its classes are "
          f"{list(ds.remote_mro)}.")
    n = len(ds)
    check(n == 13, f"len(NoisyDigits(X, y)) returned {n} for an X with 13 rows.")


def _raw_images(student, seed):
    for label, dtype in [("float64 X (as load_digits)", np.float64), ("int64 X", np.int64)]:
        X, y = _data(dtype=dtype, seed=seed)
        ds = student.NoisyDigits(X, y, 0.1)
        for i in (0, MID.start):
            image, _ = _item(ds, i, f"ds[{i}]")
            check(isinstance(image, torch.Tensor),
                  f"The image of ds[{i}] with {label} must be a torch.Tensor, got "
                  f"{describe(image)}.")
            yield f"ds[{i}] with {label}", image


@pytest.mark.points(0.75)
def test_image_shape(student):
    """Images have shape (1, 8, 8)"""
    for what, image in _raw_images(student, seed=1):
        check(image.shape == (1, 8, 8),
              f"The image of {what} has shape {tuple(image.shape)}; it must be (1, 8, 8): one "
              f"channel of 8x8 pixels, the layout a Conv2d expects.")


@pytest.mark.points(0.75)
def test_image_dtype(student):
    """Images are float32, for float64 and integer X"""
    for what, image in _raw_images(student, seed=10):
        check(image.dtype == torch.float32,
              f"The image of {what} is {str(image.dtype).removeprefix('torch.')}; it must be "
              f"float32 (load_digits data is float64, and arithmetic with it stays float64: "
              f"convert it).")


@pytest.mark.points(1)
def test_values_without_noise(student):
    """With sigma = 0 the image is exactly X[i] / 16"""
    X, y = _data(seed=2)
    ds = student.NoisyDigits(X, y, 0.0)
    for i in (0, 3, 11, MID.start, STRIPES.start):
        image = _image(ds, i, f"ds[{i}] (sigma = 0)")
        expected = torch.from_numpy(X[i]).reshape(1, 8, 8).to(torch.float64) / 16
        undivided = torch.from_numpy(X[i]).reshape(1, 8, 8).double().clamp(0, 1)
        assert_close(image, expected, rtol=0, atol=1e-7,
                     name=f"the image of ds[{i}] with sigma = 0",
                     misconceptions={
                         "The pixels were not divided by 16: X holds values 0..16 and the image "
                         "must lie in [0, 1].": undivided,
                         "The pixels look transposed: reshape the 64 values row by row into 8x8 "
                         "without transposing.": expected.transpose(1, 2),
                     },
                     hint="With sigma = 0 the image must be X[i] / 16 reshaped to (1, 8, 8).")


@pytest.mark.points(1)
def test_label(student):
    """Labels are 0-d int64 tensors equal to y[i], whatever y's integer dtype"""
    for label_dtype in (np.int64, np.int32):
        X, y = _data(label_dtype=label_dtype, seed=3)
        ds = student.NoisyDigits(X, y, 0.1)
        for i in (0, 4, 7):
            _, lab = _item(ds, i, f"ds[{i}]")
            check(isinstance(lab, torch.Tensor),
                  f"The label of ds[{i}] must be a 0-d int64 tensor, got {describe(lab)}. "
                  f"Wrap it, e.g. with torch.tensor(..., dtype=torch.int64).")
            check(lab.dim() == 0,
                  f"The label of ds[{i}] has shape {tuple(lab.shape)}; it must be 0-d (a "
                  f"scalar tensor) so that a DataLoader batches labels into shape (batch,).")
            check(lab.dtype == torch.int64,
                  f"The label of ds[{i}] is {str(lab.dtype).removeprefix('torch.')} when y is a "
                  f"NumPy {np.dtype(label_dtype).name} array; it must be int64 (cross_entropy "
                  f"needs int64 targets). Converting with from_numpy/as_tensor keeps the "
                  f"array's dtype.")
            check(int(lab) == int(y[i]),
                  f"The label of ds[{i}] is {int(lab)}, but y[{i}] is {int(y[i])}.")


@pytest.mark.points(1)
def test_clamped_to_unit_interval(student):
    """Noisy images are clamped to [0, 1]"""
    X, y = _data(seed=4)
    ds = student.NoisyDigits(X, y, 0.5)
    imgs = torch.stack([_image(ds, i, f"ds[{i}] (sigma = 0.5)") for i in STRIPES])
    lo, hi = imgs.min().item(), imgs.max().item()
    check(lo >= 0.0 and hi <= 1.0,
          f"With sigma = 0.5, pixel values ranged from {lo:.3g} to {hi:.3g}; the image must be "
          f"clamped to [0, 1] after adding the noise.")
    black = torch.from_numpy(X[STRIPES.start:STRIPES.stop] == 0).reshape(imgs.shape)
    white = torch.from_numpy(X[STRIPES.start:STRIPES.stop] == 16).reshape(imgs.shape)
    at_zero = (imgs[black] == 0).float().mean().item()
    at_one = (imgs[white] == 1).float().mean().item()
    check(0.3 <= at_zero <= 0.7 and 0.3 <= at_one <= 0.7,
          f"With sigma = 0.5, about half of the black pixels should be clamped to exactly 0 "
          f"(got {at_zero:.0%}) and about half of the white pixels to exactly 1 (got "
          f"{at_one:.0%}). The image must be clamp(X[i] / 16 + sigma * noise, 0, 1), with the "
          f"noise added before clamping and no other rescaling.")


def _residuals(ds, sigma, label):
    imgs = torch.stack([_image(ds, i, f"ds[{i}] ({label})") for i in MID]).double()
    if imgs.std().item() < 1e-3 * sigma:
        fail(f"With {label}, the images of digits whose pixels are all 8 came back constant "
             f"(every pixel {imgs.flatten()[0].item():.3g}): expected 8 / 16 plus fresh noise "
             f"on every pixel.")
    return (imgs - 0.5) / sigma   # rows of MID are 8 everywhere: 0.5, far from the clamps


@pytest.mark.points(1.5)
def test_noise_is_standard_normal_per_pixel(student):
    """The noise is sigma times standard normal, independent per pixel (default sigma 0.1)"""
    X, y = _data(seed=5)
    for label, ds, sigma in [("sigma = 0.05", student.NoisyDigits(X, y, 0.05), 0.05),
                             ("the default sigma", student.NoisyDigits(X, y), 0.1)]:
        z = _residuals(ds, sigma, label)   # 24 images * 64 pixels = 1536 noise values
        mean, std = z.mean().item(), z.std().item()
        per_image_std = z.flatten(1).std(dim=1).min().item()
        check(per_image_std > 0.1,
              f"With {label}, some image had (almost) the same noise on every pixel (spread "
              f"across its pixels {per_image_std * sigma:.3g}). Each pixel needs its own "
              f"standard normal value: draw noise with the image's shape.")
        check(abs(mean) < 0.2,
              f"With {label}, the noise added to the pixels has mean {mean * sigma:.3g} instead "
              f"of about 0: it must be sigma times standard normal noise (torch.randn), which is "
              f"centred on 0.")
        check(0.85 < std < 1.15,
              f"With {label}, the noise added to the pixels has standard deviation "
              f"{std * sigma:.3g} instead of about {sigma}: it must be sigma times standard "
              f"normal noise" + (" (and sigma must default to 0.1)." if sigma == 0.1 else "."))


@pytest.mark.points(1)
def test_fresh_noise_every_access(student):
    """Reading the same index twice gives different noise"""
    X, y = _data(seed=6)
    ds = student.NoisyDigits(X, y, 0.2)
    a = _image(ds, 4, "ds[4]")
    b = _image(ds, 4, "ds[4] read a second time")
    c = _image(ds, MID.start, f"ds[{MID.start}]")
    d = _image(ds, MID.start, f"ds[{MID.start}] read a second time")
    check(not torch.equal(a, b) or not torch.equal(c, d),
          "Reading the same index twice returned the same noisy image. The noise must be drawn "
          "afresh in __getitem__ at every access; noise drawn once (in __init__) is the same "
          "every epoch, so the model sees no augmentation.")


@pytest.mark.points(1)
def test_reproducible_with_torch_manual_seed(sandbox):
    """torch.manual_seed alone makes an access reproducible (and changes the noise)"""
    X, y = _data(seed=7)
    # (torch seed, NumPy/random seed) before each read of ds[5]
    plan = [[123, 1], [123, 2], [124, 1]]
    images = sandbox.probe("reseeded_reads", X, y, 0.2, 5, plan)
    first, same_torch_seed, other_torch_seed = [_as_pixels(img, "ds[5]") for img in images]
    check(torch.equal(first, same_torch_seed),
          "After torch.manual_seed(123), ds[5] gave a different image depending on NumPy's and "
          "Python's random state (or on how often it was read before). The noise must come "
          "from torch's global generator (torch.randn and friends, no generator= argument, "
          "no NumPy), so that torch.manual_seed alone makes it reproducible.")
    check(not torch.equal(first, other_torch_seed),
          "ds[5] gave the same image after torch.manual_seed(123) and torch.manual_seed(124): "
          "the noise does not depend on torch's global generator. Draw it at each access with "
          "torch's random functions.")


@pytest.mark.points(1)
@pytest.mark.timeout(60)
def test_dataloader_workers_differ(sandbox):
    """A DataLoader with 2 workers gets different noise in each worker"""
    X, y = _data(seed=8)
    images = sandbox.probe("loader_reads", X, y, 0.2, 6, 8, 2, 99)
    check(len(images) == 8, f"Reading ds[6] 8 times through a DataLoader(num_workers=2) gave "
                            f"{len(images)} images.")
    images = [_as_pixels(t, "ds[6] read through a DataLoader") for t in images]
    worker0, worker1 = images[0::2], images[1::2]
    repeats = sum(torch.equal(images[a], images[b]) for a in range(8) for b in range(a + 1, 8))
    same_across = all(torch.equal(p, q) for p, q in zip(worker0, worker1, strict=True))
    check(not same_across,
          "Read through a DataLoader with num_workers=2, both worker processes produced exactly "
          "the same noisy images. Each worker is seeded differently through torch's global "
          "generator; noise drawn in __init__ or from a generator stored in the dataset is "
          "copied into every worker unchanged.")
    check(repeats == 0,
          f"Read 8 times through a DataLoader with num_workers=2, ds[6] repeated an identical "
          f"noisy image {repeats} time(s): every access must draw fresh noise.")


@pytest.mark.points(0.5)
def test_inputs_unchanged(sandbox):
    """X and y are never modified"""
    X, y = _data(seed=9)
    reads = [0, MID.start, STRIPES.start, 0]
    X_after, y_after = sandbox.probe("arrays_after_use", X, y, 0.3, reads)
    check(isinstance(X_after, np.ndarray) and X_after.dtype == X.dtype
          and np.array_equal(X_after, X),
          "After constructing NoisyDigits(X, y) and reading a few items, the caller's X had "
          "changed. Never modify X in place (e.g. X /= 16): work on a converted copy.")
    check(isinstance(y_after, np.ndarray) and y_after.dtype == y.dtype
          and np.array_equal(y_after, y),
          "After constructing NoisyDigits(X, y) and reading a few items, the caller's y had "
          "changed.")
