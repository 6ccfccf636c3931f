"""A student's checkpoint is never decoded by the judge: its declared sizes are checked first (issue 22)."""

from __future__ import annotations

import io
import zipfile

import torch

from autograder.judge.archive import MAX_INFLATION, declared_size_problem


def _saved(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def deflate_bomb(megabytes: int = 64) -> bytes:
    """A torch.save archive whose storage is recompressed with DEFLATE: small file, huge declared size."""
    src = zipfile.ZipFile(io.BytesIO(_saved({"w": torch.zeros(megabytes << 18)})))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, src.read(info))
    return out.getvalue()


def test_an_honest_checkpoint_passes():
    model = torch.nn.Linear(30, 20)
    assert declared_size_problem(_saved({"model": model.state_dict(), "epoch": 3})) is None


def test_a_compressed_storage_is_refused_before_anything_is_decompressed():
    bomb = deflate_bomb(64)
    assert len(bomb) < 1 << 20
    problem = declared_size_problem(bomb)
    assert problem is not None and f"more than {MAX_INFLATION} times its size" in problem


def test_bytes_that_are_not_an_archive_are_left_to_the_decoder():
    assert declared_size_problem(b"not a zip at all") is None
