"""A TA's batch end to end on the demo course: review flags in every output, the summary line, Ctrl-C."""

from __future__ import annotations

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.batch.test_runner import REF, gradings, tg
from tests.helpers import DEMO_COURSE, ROOT

STUB = "\n# %%\n".join((DEMO_COURSE / "assignments/demo" / ex / "stub.py").read_text() for ex in ("basics", "counter"))


def book(out: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").read_text().splitlines())}


def test_blank_duplicate_and_late_reach_the_gradebook_the_report_and_the_feedback(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.py").write_text("# %%\n" + STUB)  # the stub, untouched
    (subs / "ben.py").write_text(REF)
    (subs / "quinn.py").write_text(REF)  # byte-identical to ben's
    (subs / "doejane_late_4242_5001_hw.py").write_text(REF.replace("x * 2", "2 * x"))  # Canvas's LATE
    out = tmp_path / "out"
    run = tg(str(subs), "--out", str(out), "--jobs", "1")
    assert run.returncode == 0, run.stderr
    assert "on 1 worker)" in run.stdout  # not "1 workers"

    rows = book(out)
    assert rows["ann"]["flagged"] == "yes" and rows["ann"]["review"].startswith("blank submission")
    assert "identical to quinn" in rows["ben"]["review"] and "identical to ben" in rows["quinn"]["review"]
    assert rows["doejane_4242"]["review"] == "late (Canvas marked the file LATE)"
    report = (out / "report.html").read_text()
    assert "Flagged for review (4)" in report and "Canvas marked the file LATE" in report
    assert "Students (4)" in report and 'href="doejane_4242/feedback.html"' in report
    assert "unchanged stub" in (out / "ann" / "feedback.md").read_text()
    for name in ("feedback.md", "feedback.html"):
        text = (out / "ben" / name).read_text()
        assert "identical to another submission" in text and "quinn" not in text
    assert "Submitted late" in (out / "doejane_4242" / "feedback.html").read_text()
    # identical files are flagged as duplicates, not listed again as a similar pair
    assert "Similar code (" in report and "ben and quinn" not in report


def test_ctrl_c_writes_a_partial_gradebook_and_report_and_says_how_to_finish(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    names = [f"s{i:02d}" for i in range(8)]
    for n in names:  # a pause per submission, so Ctrl-C lands mid-batch even on a loaded machine
        (subs / f"{n}.py").write_text(f"import time\ntime.sleep(1.5)\n# %%\n{REF}\n# {n}\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(subs), "--out", str(out), "--assignment", "demo",
           "--course", str(DEMO_COURSE), "--jobs", "1", "--progress", "plain"]
    # as a terminal runs a foreground job: Ctrl-C's signal at its default, whatever this test process inherited
    # (a job started in the background by a shell without job control has SIGINT ignored, and Python keeps that)
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        try:
            if (out / "grades.sqlite").exists() and sum(gradings(out).values()) >= 2:
                break
        except sqlite3.Error:
            continue
    assert proc.poll() is None, "the batch finished before Ctrl-C: make the submissions slower"
    os.kill(proc.pid, signal.SIGINT)  # what Ctrl-C sends
    said, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (err, said)
    stored = sum(gradings(out).values())
    assert 2 <= stored < len(names)
    assert "Rerun the same command to finish" in err and f"{stored} of {len(names)} submissions graded" in err
    assert "Traceback" not in err and err.count("interrupted") == 1  # said once
    rows = book(out)
    assert sorted(rows) == sorted(n for n in names if n in rows) and len(rows) == stored
    assert all(r["total"] == "6" for r in rows.values())
    report = (out / "report.html").read_text()
    assert f"Partial: {len(names) - stored} of {len(names)} submissions are not graded yet" in report
    fates = [r["fate"] for r in csv.DictReader((out / "inputs.csv").read_text().splitlines())]
    assert fates.count("not graded yet") == len(names) - stored

    rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(names) - stored} to grade, {stored} already graded" in rerun.stdout
    assert len(book(out)) == len(names) and "Partial:" not in (out / "report.html").read_text()
