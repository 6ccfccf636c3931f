"""A full disk under the real service, with real warm workers: the data folder is a small tmpfs, filled up
while a submission is being graded, then freed.

Today's main answered an upload on a full disk with a bare 500; the grading thread whose result could not be
stored died, its job stayed `running` for ever, later submissions stayed `queued`, and `/healthz` kept saying
ready. Here the upload gets a 507 that says why, `/healthz` says the disk is full, and once space is freed the
job is graded (its slot was started again) and `/healthz` is ready again.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest

from tests.helpers import DEMO_COURSE, until
from tests.service.live import LiveServer, multipart

SLOW = b"import time\ntime.sleep(4)\n\ndef shares_storage(a, b):\n    return True\n"


def _mount(where) -> str:
    if os.geteuid() != 0:
        return "needs root to mount a small tmpfs as the data folder"
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(where)], capture_output=True)
    return "" if r.returncode == 0 else f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace')}"


def _fill(where) -> None:
    with open(where / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
        try:
            os.fsync(f.fileno())
        except OSError:
            pass


def _health(server) -> tuple[int, dict]:
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(server.url + "/healthz", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_a_full_disk_during_grading_is_said_and_survived(tmp_path):
    root = tmp_path / "svc"
    root.mkdir()
    why = _mount(root / "data")
    if why:
        pytest.skip(why)
    server = LiveServer(root, '[[assignments]]\nid = "demo"\n', course=DEMO_COURSE)
    try:
        server.start()
        body, headers = multipart("slow.py", SLOW)
        code, got = server.api("/api/submissions", "ann", body, headers)
        assert code == 202, got
        server.wait_status(got["id"], "ann", ("running",), timeout=60)
        with sqlite3.connect(server.data / "service.sqlite") as db:  # the WAL must grow to store the result
            assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        _fill(server.data)
        # while it is full: /healthz says so, an upload is refused with a reason, nothing is half-stored
        status = until(lambda: (lambda s: s if s[0] == 503 and "full" in s[1]["detail"] else None)(_health(server)),
                        60, f"/healthz said the disk is full:\n{server.tail()}")
        assert "disk" in status[1]["detail"]
        code, refused = server.api("/api/submissions", "ben", *multipart("b.py", SLOW + b"# ben\n" * 2000))
        assert code in (503, 507), (code, refused)
        assert "disk" in refused["error"] and "nothing was submitted" in refused["error"]
        until(lambda: "grading is paused until space is freed" in server.tail(), 60,
               f"the slot said why it stopped:\n{server.tail()}")
        with server.db() as db:
            assert db.execute("SELECT state FROM jobs WHERE submission = ? AND suites = 'hidden'",
                              (got["id"],)).fetchone()[0] in ("running", "queued")  # not done, not lost
        # space comes back: the job is graded after all, and the service is ready again
        (server.data / "filler").unlink()
        final = server.wait_status(got["id"], "ann", ("graded", "error"), timeout=120)
        assert final["status"] == "graded", final
        until(lambda: _health(server)[0] == 200, 60, f"/healthz ready again:\n{server.tail()}")
        with server.db() as db:
            assert db.execute("SELECT COUNT(*) FROM jobs WHERE state = 'running'").fetchone()[0] == 0
            assert db.execute("SELECT COUNT(*) FROM submissions WHERE person = 'ben'").fetchone()[0] == 0
        code, again = server.api("/api/submissions", "ben", *multipart("b.py", SLOW))
        assert code == 202, again
        assert server.wait_status(again["id"], "ben", ("graded", "error"), timeout=120)["status"] == "graded"
    finally:
        server.stop()
        subprocess.run(["umount", "-l", str(root / "data")], capture_output=True)
