"""Issue 22 end to end, through `torchgrader grade`: what one student hands in never stops the others' outputs,
never reaches another output raw, and the store never reuses a grade made with other score-deciding settings."""

from __future__ import annotations

import csv
import re
import shutil
import sqlite3
import zipfile
from pathlib import Path

from tests.batch.test_runner import REF, gradebook, gradings, tg

CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # every C0/C1 control but \t, \n, \r
SECRET = "TA_TOKEN = 'sk-live-4242'"


def _outputs(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in sorted(out.rglob("*"))
            if p.is_file() and p.suffix in (".csv", ".md", ".html", ".json")}


def test_a_hostile_class_still_gets_every_output_and_nothing_leaks_or_acts(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_notes.py").write_text(f"{SECRET}\n{REF}")
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "mallory.py").symlink_to(Path("..") / "outside" / "secret_notes.py")  # a TA's file, by a link
    (subs / "zoe.py").write_text(REF + '\n# %%\nraise ValueError("boom \\ud800 \\x1b[2J")\n')  # a lone surrogate
    with zipfile.ZipFile(subs / "upload.zip", "w") as z:  # a file name with ESC, a C1 CSI and a bare CR
        z.writestr("evil\x1b[2J\x9b31m\rfake.py", REF)
    out = tmp_path / "out"

    first = tg(str(subs), "--out", str(out), "--jobs", "1", "--exercise", "basics")
    assert first.returncode == 0, first.stderr
    shown = first.stdout + first.stderr
    assert CONTROL.search(shown) is None and "\r" not in shown, shown  # nothing reaches the terminal raw
    assert "evil\\x1b[2J\\x9b31m\\rfake" in shown
    book = {r["student"]: r for r in gradebook(out)}
    assert set(book) == {"alice", "zoe", "upload"}, book  # mallory's link was never graded
    assert book["zoe"]["total"] == book["alice"]["total"] != "0"  # her surrogate costs nobody anything
    outputs = _outputs(out)
    assert "zoe/feedback.md" in outputs and "upload/feedback.md" in outputs and "report.html" in outputs
    for name, text in outputs.items():
        assert "sk-live" not in text, name
        assert CONTROL.search(text) is None, name
    assert "sk-live" not in shown
    rows = list(csv.DictReader(outputs["inputs.csv"].splitlines()))
    link = [r for r in rows if r["source"].endswith("mallory.py")]
    assert len(link) == 1 and "symbolic link" in link[0]["detail"]

    (out / "gradebook.csv").unlink()  # a rerun always writes the outputs, from the store
    (out / "report.html").unlink()
    shutil.rmtree(out / "alice")
    shutil.rmtree(out / "zoe")
    (out / "zoe").write_text("a file where zoe's folder goes: her feedback cannot be written")
    second = tg(str(subs), "--out", str(out), "--jobs", "1", "--exercise", "basics")
    assert second.returncode == 0, second.stderr
    assert "0 to grade, 3 already graded" in second.stdout
    assert "could not write the feedback of" in second.stderr and "zoe" in second.stderr
    assert {r["student"]: r["total"] for r in gradebook(out)} == {s: r["total"] for s, r in book.items()}
    assert (out / "report.html").is_file() and (out / "alice" / "feedback.md").is_file()  # the others: written


def test_a_grade_made_with_other_settings_is_never_reused_and_the_rerun_says_why(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    out = tmp_path / "out"
    args = [str(subs), "--out", str(out), "--jobs", "1", "--exercise", "basics"]

    assert tg(*args, "--cell-timeout", "1").returncode == 0
    default = tg(*args)
    assert default.returncode == 0, default.stderr
    assert "1 to grade, 0 already graded" in default.stdout, default.stdout
    assert "the grading settings changed: options.budget.cell_seconds 1.0 -> 60.0" in default.stdout
    assert tg(*args, "--exercise", "counter").returncode == 0  # another exercise list: another key too
    assert gradings(out) == {"alice": 3}

    # An output folder from before the settings were in the key: its results are regraded, never read.
    with sqlite3.connect(out / "grades.sqlite") as db:
        db.execute("DELETE FROM results WHERE suite_version NOT IN "
                   "(SELECT suite_version FROM results ORDER BY graded_at LIMIT 1 OFFSET 1)")
        db.execute("UPDATE results SET suite_version = substr(suite_version, 1, instr(suite_version, '+') - 1)")
    old = tg(*args)
    assert old.returncode == 0, old.stderr
    assert "1 to grade, 0 already graded" in old.stdout
    assert "earlier torchgrader whose results do not record the grading settings" in old.stdout
    assert gradings(out) == {"alice": 4}
