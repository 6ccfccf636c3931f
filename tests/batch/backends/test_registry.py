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
    assert list(backend.choices) == list(REGISTRY) == ["process", "docker", "podman", "dask"]


def test_a_name_gives_its_backend_and_a_wrong_one_names_the_known_ones(tmp_path: Path):
    b = make_backend("process", _where(tmp_path))
    assert isinstance(b, ProcessBackend) and b.workers == 2
    with pytest.raises(WorkerFatal, match="unknown backend 'slurm' \\(known: process, docker, podman, dask\\)"):
        make_backend("slurm", _where(tmp_path))
    with pytest.raises(WorkerFatal, match="--backend dask needs --scheduler ADDRESS"):
        make_backend("dask", _where(tmp_path))


def test_the_grading_settings_reach_a_worker_whole_and_a_container_without_host_paths(tmp_path: Path):
    """One settings object: what the CLI chose is what the worker grades with."""
    from autograder.cli import _options, build_parser
    from autograder.grade import GradeOptions

    args = build_parser().parse_args(["grade", "x", "--assignment", "demo", "--out", str(tmp_path),
                                      "--memory-gb", "2.5", "--cell-timeout", "7", "--submission-timeout", "90",
                                      "--exercise", "basics", "--no-isolation"])
    options = _options(args)
    options.protected = [tmp_path]
    cfg = WorkerConfig(course=str(tmp_path), assignment="demo", options=options, suite_version="v1")
    back = WorkerConfig.from_json(cfg.to_json())
    assert back == cfg and isinstance(back.options, GradeOptions)
    assert back.options.limits.memory_bytes == int(2.5 * 2**30) and back.options.budget.cell_seconds == 7
    assert back.options.budget.submission_seconds == 90 and back.options.exercises == ["basics"]
    assert back.options.isolate is False and back.options.protected == [tmp_path]
    inner = cfg.elsewhere("/course")
    assert inner.course == "/course" and inner.options.protected == [] and cfg.options.protected == [tmp_path]
