"""The Dask backend against a real LocalCluster: worker processes on loopback, the same sandbox on each."""

from __future__ import annotations

import csv
import sqlite3

import pytest

from tests.batch.test_runner import REF, SQUARES, tg

distributed = pytest.importorskip("distributed")


def test_dask_backend_grades_a_folder_on_a_local_cluster(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "bob.py").write_text(SQUARES)
    (subs / "carol.ipynb").write_text("{ not a notebook")
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        p = tg(str(subs), "--out", str(out), "--backend", "dask", "--scheduler", cluster.scheduler_address)
        assert p.returncode == 0, p.stderr
        assert "on 2 workers" in p.stdout
        with sqlite3.connect(out / "grades.sqlite") as db:
            workers = {w for (w,) in db.execute("SELECT worker FROM gradings")}
    rows = list(csv.DictReader((out / "gradebook.csv").read_text().splitlines()))
    assert [(r["student"], r["total"], r["status"]) for r in rows] == [
        ("alice", "6", "graded"), ("bob", "5", "graded"), ("carol", "0", "load_error")]
    assert all(w.startswith("dask ") for w in workers)  # graded on the cluster's workers, not locally
    assert "You squared the values" in (out / "bob" / "feedback.md").read_text()
