"""The backend registry: one table from a name to its factory, which the CLI's --backend choices come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.batch.backends import REGISTRY, Where, WorkerFatal, make_backend
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from autograder.cli import build_parser


def _where(tmp_path: Path, **kw) -> Where:
    return Where(WorkerConfig(course=".", assignment="demo"), 2, tmp_path, **kw)


def test_the_cli_offers_exactly_the_registered_backends():
    grade = build_parser()._subparsers._group_actions[0].choices["grade"]
    backend = next(a for a in grade._actions if a.dest == "backend")
    assert list(backend.choices) == list(REGISTRY) == ["process", "docker", "dask"]


def test_a_name_gives_its_backend_and_a_wrong_one_names_the_known_ones(tmp_path: Path):
    b = make_backend("process", _where(tmp_path))
    assert isinstance(b, ProcessBackend) and b.workers == 2
    with pytest.raises(WorkerFatal, match="unknown backend 'slurm' \\(known: process, docker, dask\\)"):
        make_backend("slurm", _where(tmp_path))
    with pytest.raises(WorkerFatal, match="--backend dask needs --scheduler ADDRESS"):
        make_backend("dask", _where(tmp_path))
