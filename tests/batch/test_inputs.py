"""Batch inputs: folders, LMS zips, nbgrader's layout, student ids, newest per student, hostile archives."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.batch.inputs import ArchiveLimits, expand, parse_name

CODE = "def double(x):\n    return x * 2\n"


def _zip(path: Path, entries: dict[str, str | bytes], dates: dict[str, tuple] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(dates or {}).get(name, (2024, 1, 1, 12, 0, 0)))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return path


@pytest.mark.parametrize("name, student, how", [
    ("smithjohn_12345_67890_hw3", "smithjohn_12345", "canvas"),
    ("smithjohn_LATE_12345_67891_hw3-1", "smithjohn_12345", "canvas"),
    ("Jane Doe_4321_assignsubmission_file_hw3", "jane_doe_4321", "moodle"),
    ("Jane Doe_4321_assignsubmission_file_", "jane_doe_4321", "moodle"),  # the folder form
    ("Homework 3_jdoe7_attempt_2024-02-01-13-05-09_hw3", "jdoe7", "blackboard"),
    ("123-456 - Émile Zola - Feb 1, 2024 105 PM - hw3", "émile_zola", "brightspace"),
])
def test_lms_name_patterns(name, student, how):
    info = parse_name(name)
    assert info is not None and (info.student, info.how) == (student, how)


def test_plain_names_are_not_lms_names():
    assert parse_name("alice") is None
    assert parse_name("hw3_final") is None


def test_canvas_zip_newest_counts_nested_zip_and_hostile_entries(tmp_path):
    inner = tmp_path / "inner.zip"
    _zip(inner, {"work/hw3.ipynb": "{}"})
    entries = {
        "smithjohn_12345_67890_hw3.py": CODE,
        "smithjohn_late_12345_67999_hw3-1.py": CODE + "# resubmitted\n",  # a later upload: newer file id
        "doejane_222_333_hw3.py": CODE,
        "leeann_444_555_hw3.zip": inner.read_bytes(),  # a student who zipped their work
        "../../escape.py": CODE,  # zip-slip
        "/abs/evil.py": CODE,
        "notes_1_2_report.pdf": b"%PDF-1.4",
        "__MACOSX/._smithjohn_12345_67890_hw3.py": CODE,
    }
    archive = _zip(tmp_path / "canvas.zip", entries)
    with zipfile.ZipFile(archive, "a") as z:  # a symbolic link entry
        info = zipfile.ZipInfo("link_1_2_hw.py")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    work = tmp_path / "work"
    work.mkdir()
    before = archive.read_bytes()
    got = expand([archive], work)
    students = {e.student: e for e in got.entries}
    assert sorted(students) == ["doejane_222", "leeann_444", "smithjohn_12345"]
    assert students["smithjohn_12345"].source.endswith("smithjohn_late_12345_67999_hw3-1.py")
    assert [old.source.rsplit(":", 1)[1] for old, _ in got.superseded] == ["smithjohn_12345_67890_hw3.py"]
    assert students["leeann_444"].how == "canvas" and students["leeann_444"].path.name == "hw3.ipynb"
    problems = "\n".join(got.problems)
    assert "escape.py: refused" in problems and "evil.py: refused" in problems and "symbolic link" in problems
    assert any("report.pdf" in i for i in got.ignored)
    assert not (tmp_path / "escape.py").exists() and not Path("/abs/evil.py").exists()
    for e in got.entries:  # every extracted file is inside the private work folder
        assert e.path.resolve().is_relative_to(work.resolve())
    assert archive.read_bytes() == before


def test_zip_bombs_and_corrupt_archives_are_reported_not_fatal(tmp_path):
    bomb = _zip(tmp_path / "bomb.zip", {"a_1_2_x.py": "#" * 200_000})
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is no zip")
    (tmp_path / "ok.py").write_text(CODE)
    (tmp_path / "w").mkdir()
    got = expand([bomb, broken, tmp_path / "ok.py", tmp_path / "missing.py"], tmp_path / "w",
                 limits=ArchiveLimits(max_total_bytes=100_000))
    assert [e.student for e in got.entries] == ["ok"]
    text = "\n".join(got.problems)
    assert "bomb.zip: expands to 195.3 KiB, more than the 97.7 KiB allowed" in text
    assert "broken.zip: not a readable zip" in text and "missing.py: no such file" in text
    # nothing of the bomb was written: only ok.py's staged copy (what is graded is what was hashed)
    assert [p.relative_to(tmp_path / "w").as_posix() for p in (tmp_path / "w").rglob("*") if p.is_file()] == [
        "staged/0/ok.py"]

    (tmp_path / "w2").mkdir()
    got = expand([bomb], tmp_path / "w2", limits=ArchiveLimits(max_file_bytes=50_000))
    assert got.entries == [] and "allowed for one file" in got.problems[0]


def test_nbgrader_layout_and_folder_per_student(tmp_path):
    sub = tmp_path / "course" / "submitted"
    for student, assignment in [("alice", "ps1"), ("bob", "ps1"), ("alice", "ps2")]:
        d = sub / student / assignment
        d.mkdir(parents=True)
        (d / f"{assignment}.ipynb").write_text("{}")
        (d / "timestamp.txt").write_text("2024-02-01 10:00:00.000000 UTC")
    got = expand([sub], tmp_path, assignment="ps1")
    assert [(e.student, e.nbgrader_assignment, e.how) for e in got.entries] == [
        ("alice", "ps1", "nbgrader layout"), ("bob", "ps1", "nbgrader layout")]
    assert got.entries[0].timestamp == 1706781600.0
    assert any("another assignment (ps2)" in i for i in got.ignored)

    # A folder per student, with an older and a newer file for one of them.
    subs = tmp_path / "subs"
    for student in ("carol", "dave"):
        (subs / student).mkdir(parents=True)
        (subs / student / "hw.py").write_text(CODE)
    old = subs / "carol" / "draft.py"
    old.write_text(CODE)
    os.utime(old, (1_000_000, 1_000_000))
    got = expand([subs], tmp_path)
    assert [(e.student, e.submission) for e in got.entries] == [("carol", "carol/hw"), ("dave", "dave/hw")]
    assert [(o.submission, n.submission) for o, n in got.superseded] == [("carol/draft", "carol/hw")]


def test_a_folder_of_plain_files_keeps_file_stems(tmp_path):
    wrap = tmp_path / "download" / "Homework 3"  # a copied parent folder wraps everything
    wrap.mkdir(parents=True)
    for n in ("alice.py", "bob.ipynb"):
        (wrap / n).write_text(CODE)
    got = expand([tmp_path / "download"], tmp_path)
    assert [(e.student, e.submission) for e in got.entries] == [("alice", "alice"), ("bob", "bob")]


def test_private_temp_folders_of_killed_processes_are_cleaned_up():
    import tempfile

    from autograder.batch.inputs import private_tempdir

    base = Path(tempfile.gettempdir())
    dead = base / "torchgrader-janitortest-999999999-abc"  # above any pid_max: no such process
    alive = base / f"torchgrader-janitortest-{os.getppid()}-abc"
    for d in (dead, alive):
        d.mkdir(exist_ok=True)
    try:
        mine = private_tempdir("janitortest")
        assert not dead.exists() and alive.exists()
        assert mine.name.startswith(f"torchgrader-janitortest-{os.getpid()}-")
        assert stat.S_IMODE(mine.stat().st_mode) == 0o700
    finally:
        import shutil

        for d in (dead, alive, mine):
            shutil.rmtree(d, ignore_errors=True)
