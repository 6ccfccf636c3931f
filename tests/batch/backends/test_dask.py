"""The Dask backend against a real LocalCluster: worker processes on loopback, the same sandbox on each."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import sqlite3
import tarfile
import tempfile
from pathlib import Path

import pytest

from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.dask import close_idle, live_judges, pack_course
from tests.batch.test_runner import REF, SQUARES, tg
from tests.helpers import DEMO_COURSE

distributed = pytest.importorskip("distributed")


def test_packing_is_deterministic_and_holds_only_the_grading_material(tmp_path):
    import shutil

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    cfg = WorkerConfig(course=str(course), assignment="demo")
    first = pack_course(cfg)
    probes = course / "solutions/demo/counter/probes.py"
    os.utime(probes, (1_000_000, 1_000_000))  # a touched file, a later second: the same bytes
    assert pack_course(cfg) == first
    with tarfile.open(fileobj=io.BytesIO(first), mode="r:gz") as tar:
        names = tar.getnames()
    assert "solutions/demo/counter/probes.py" in names and "solutions/demo/basics/test_hidden.py" in names
    assert "assignments/demo/basics/public_test.py" in names
    assert not [n for n in names if n.endswith("reference.py") or "/mutants/" in n or "/alternatives/" in n]
    probes.write_text(probes.read_text() + "\n# changed\n")
    assert pack_course(cfg) != first  # other material, another key


def test_dask_backend_grades_on_a_local_cluster_and_leaves_no_idle_judge(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "bob.py").write_text(SQUARES)
    (subs / "carol.ipynb").write_text("{ not a notebook")
    out = tmp_path / "out"
    key = hashlib.sha256(pack_course(WorkerConfig(course=str(DEMO_COURSE), assignment="demo"))).hexdigest()[:16]
    extracted = Path(tempfile.gettempdir()) / f"torchgrader-course-{key}-{os.getuid()}"
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        p = tg(str(subs), "--out", str(out), "--backend", "dask", "--scheduler", cluster.scheduler_address)
        assert p.returncode == 0, p.stderr
        assert "on 2 workers" in p.stdout
        assert sum(client.run(live_judges).values()) == 0  # every judge closed when the batch ended
        assert sum(client.run(close_idle).values()) == 0
        with sqlite3.connect(out / "grades.sqlite") as db:
            workers = {w for (w,) in db.execute("SELECT worker FROM gradings")}
        client.retire_workers(list(client.nthreads())[:1])
        (subs / "alice.py").write_text(REF + "\n# resubmitted\n")
        again = tg(
            str(subs),
            "--out",
            str(out),
            "--backend",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--exercise",
            "basics",
        )
        assert again.returncode == 0, again.stderr
        assert "on 1 worker)" in again.stdout  # the workers alive, not those the batch started with
        assert sum(client.run(live_judges).values()) == 0
    # the same material packs to the same bytes: both batches used this one folder, named by its content
    assert extracted.is_dir()
    rows = list(csv.DictReader((out / "gradebook.csv").read_text().splitlines()))
    assert [(r["student"], r["status"]) for r in rows] == [
        ("alice", "graded"),
        ("bob", "graded"),
        ("carol", "load_error"),
    ]
    assert all(w.startswith("dask ") for w in workers)  # graded on the cluster's workers, not locally
    assert "You squared the values" in (out / "bob" / "feedback.md").read_text()
