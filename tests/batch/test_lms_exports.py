"""Bulk downloads as each LMS writes them: same-name students, resubmissions, late files, helper files,
non-ASCII names (with and without the zip's UTF-8 flag), and students who name files to claim someone else."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

from autograder.batch.inputs import expand, zip_name
from autograder.batch.runner import write_inputs_csv
from autograder.report.csvfile import safe_cell
from autograder.report.gradebook import write_gradebook
from autograder.results import SubmissionResult

NB = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
PY = "def double(x):\n    return 2 * x\n"


class LegacyName(zipfile.ZipInfo):
    """An entry whose name bytes are written as given, without the UTF-8 flag (rubyzip's default, Canvas)."""

    def __init__(self, raw: bytes, date_time=(2024, 2, 1, 12, 0, 0)) -> None:
        super().__init__(raw.decode("cp437"), date_time=date_time)
        self._raw = raw

    def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own hook
        return self._raw, self.flag_bits


def make_zip(path: Path, entries: list[tuple[str | bytes, str | bytes, tuple]]) -> Path:
    """``entries``: (name, data, date); a bytes name is written raw, without the UTF-8 flag."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, date in entries:
            info = LegacyName(name, date) if isinstance(name, bytes) else zipfile.ZipInfo(name, date_time=date)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return path


def student_zip(entries: dict[str, tuple[str, tuple]]) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, (data, date) in entries.items():
            z.writestr(zipfile.ZipInfo(name, date_time=date), data)
    return buf.getvalue()


EARLY, LATER = (2024, 2, 1, 9, 0, 0), (2024, 2, 3, 9, 0, 0)
FUTURE, PAST = (2099, 12, 31, 23, 59, 58), (1990, 1, 1, 0, 0, 0)


def got(tmp_path: Path, archive: Path):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    inputs = expand([archive], work)
    return inputs, {e.student: e for e in inputs.entries}


def tail(e) -> str:
    return e.source.rsplit(":", 1)[-1]


def inputs_rows(tmp_path: Path, inputs) -> list[dict[str, str]]:
    results = [
        SubmissionResult(submission=e.submission, path=e.source, assignment="demo", student=e.student)
        for e in inputs.entries
    ]
    write_inputs_csv(tmp_path / "inputs.csv", inputs, results)
    return list(csv.DictReader((tmp_path / "inputs.csv").read_text(encoding="utf-8").splitlines()))


def test_canvas_export(tmp_path):
    archive = make_zip(
        tmp_path / "submissions.zip",
        [
            # two students named John Smith: Canvas's user id tells them apart
            ("smithjohn_101_5001_hw.ipynb", NB, EARLY),
            ("smithjohn_202_5002_hw.ipynb", NB, EARLY),
            # a resubmission: Canvas's own order (a later attachment id, -1, LATE) beats the zip entry's time
            ("doejane_LATE_303_5009_hw-1.ipynb", NB + " ", EARLY),
            ("doejane_303_5003_hw.ipynb", NB, LATER),
            # a helper file uploaded last: the notebook still counts
            ("leeann_404_5004_hw.ipynb", NB, EARLY),
            ("leeann_404_5010_scratch.py", PY, LATER),
            # a non-ASCII name, written as UTF-8 bytes without the flag (rubyzip's default)
            ("núñezjosé_505_5005_tarea.ipynb".encode(), NB, EARLY),
        ],
    )
    inputs, by = got(tmp_path, archive)
    assert sorted(by) == ["doejane_303", "leeann_404", "núñezjosé_505", "smithjohn_101", "smithjohn_202"]
    assert by["smithjohn_101"].name == by["smithjohn_202"].name == "smithjohn"  # names kept for display
    assert tail(by["doejane_303"]) == "doejane_LATE_303_5009_hw-1.ipynb"
    assert tail(by["leeann_404"]) == "leeann_404_5004_hw.ipynb"
    assert by["núñezjosé_505"].path.name == "núñezjosé_505_5005_tarea.ipynb"
    why = {k.rsplit(":", 1)[-1]: v for k, v in inputs.why.items()}
    assert "later canvas upload" in why["doejane_303_5003_hw.ipynb"]
    assert "a notebook counts over .py files" in why["leeann_404_5010_scratch.py"]
    rows = {r["source"].rsplit(":", 1)[-1]: r for r in inputs_rows(tmp_path, inputs)}
    assert rows["leeann_404_5010_scratch.py"]["fate"] == "superseded"
    assert "a notebook counts" in rows["leeann_404_5010_scratch.py"]["detail"]
    assert "user id 303" in rows["doejane_LATE_303_5009_hw-1.ipynb"]["detail"]
    assert rows["smithjohn_202_5002_hw.ipynb"]["name"] == "smithjohn"


def test_moodle_folder_and_flat_exports(tmp_path):
    folders = make_zip(
        tmp_path / "moodle-folders.zip",
        [
            ("José Núñez_77_assignsubmission_file_/tarea.ipynb", NB, EARLY),
            ("José Núñez_77_assignsubmission_file_/utils.py", PY, LATER),
            ("John Doe_12_assignsubmission_file_/hw.ipynb", NB, EARLY),
            ("John Doe_13_assignsubmission_file_/hw.ipynb", NB + " ", EARLY),
            ("John Doe_12_assignsubmission_onlinetext_/onlinetext.html", "<p>hi</p>", EARLY),
        ],
    )
    inputs, by = got(tmp_path, folders)
    assert sorted(by) == ["john_doe_12", "john_doe_13", "josé_núñez_77"]
    assert by["josé_núñez_77"].path.name == "tarea.ipynb" and by["josé_núñez_77"].name == "José Núñez"
    assert all(e.how == "moodle" for e in inputs.entries)

    flat = make_zip(
        tmp_path / "moodle-flat.zip",
        [
            ("John Doe_12_assignsubmission_file_hw.ipynb", NB, EARLY),
            ("John Doe_13_assignsubmission_file_hw.ipynb", NB + " ", EARLY),
        ],
    )
    (tmp_path / "work").rename(tmp_path / "work1")
    inputs, by = got(tmp_path, flat)
    assert sorted(by) == ["john_doe_12", "john_doe_13"]  # same name, both graded
    assert inputs.superseded == []


def test_a_single_moodle_student_folder_keeps_its_identity(tmp_path):
    one = make_zip(
        tmp_path / "one.zip",
        [
            ("Ana Li_5_assignsubmission_file_/hw.ipynb", NB, EARLY),
            ("Ana Li_5_assignsubmission_file_/helper.py", PY, LATER),
        ],
    )
    inputs, by = got(tmp_path, one)
    assert list(by) == ["ana_li_5"] and by["ana_li_5"].path.name == "hw.ipynb"


def test_blackboard_export_and_a_file_named_to_claim_another_student(tmp_path):
    archive = make_zip(
        tmp_path / "gradebook_hw.zip",
        [
            ("Homework 3_bob_attempt_2024-02-01-10-00-00_hw.ipynb", NB, LATER),
            ("Homework 3_bob_attempt_2024-02-01-10-00-00.txt", "Name: Bob (bob)", LATER),
            ("Homework 3_bob_attempt_2024-02-02-10-00-00_hw.ipynb", NB + " ", EARLY),  # a later attempt
            # mallory's upload is named like bob's attempt from the future
            (
                "Homework 3_mallory_attempt_2024-02-01-11-00-00_x_bob_attempt_2099-12-31-23-59-59_y.ipynb",
                NB + "  ",
                FUTURE,
            ),
        ],
    )
    inputs, by = got(tmp_path, archive)
    assert sorted(by) == ["bob", "mallory"]
    assert tail(by["bob"]) == "Homework 3_bob_attempt_2024-02-02-10-00-00_hw.ipynb"
    assert "x_bob_attempt_2099" in tail(by["mallory"])
    assert by["mallory"].timestamp < by["bob"].timestamp  # the date in mallory's own file name is not believed
    assert [tail(o) for o, _ in inputs.superseded] == ["Homework 3_bob_attempt_2024-02-01-10-00-00_hw.ipynb"]
    rows = {r["source"].rsplit(":", 1)[-1]: r for r in inputs_rows(tmp_path, inputs)}
    claim = rows["Homework 3_mallory_attempt_2024-02-01-11-00-00_x_bob_attempt_2099-12-31-23-59-59_y.ipynb"]
    assert claim["student"] == "mallory" and "claims student bob" in claim["detail"]


def test_files_inside_a_students_zip_are_that_students(tmp_path):
    archive = make_zip(
        tmp_path / "submissions.zip",
        [
            ("bob_11_7001_hw.ipynb", NB, EARLY),
            (
                "mallory_66_7002_hw.zip",
                student_zip(
                    {
                        "bob_11_999_hw.ipynb": (NB + " ", FUTURE),  # names bob, dated in the future
                        "a.ipynb": (NB + "  ", FUTURE),  # the student's own dates decide nothing
                        "b.ipynb": (NB + "   ", PAST),
                    }
                ),
                EARLY,
            ),
        ],
    )
    inputs, by = got(tmp_path, archive)
    assert sorted(by) == ["bob_11", "mallory_66"]
    assert tail(by["bob_11"]) == "bob_11_7001_hw.ipynb"  # bob's own submission is never superseded
    assert not any(new.student == "bob_11" for _, new in inputs.superseded)
    assert tail(by["mallory_66"]) == "bob_11_999_hw.ipynb"  # last by name: the dates inside are ignored
    notes = "\n".join(inputs.notes)
    assert "bob_11_999_hw" in notes and "claims student bob_11" in notes


def test_brightspace_folder_export(tmp_path):
    archive = make_zip(
        tmp_path / "Homework 3 Download.zip",
        [
            ("123-456 - Émile Zola - Feb 1, 2024 105 PM/hw.ipynb", NB, LATER),
            ("130-470 - Émile Zola - Feb 2, 2024 905 AM/hw.ipynb", NB + " ", EARLY),  # resubmitted
            ("131-471 - Ada Lovelace - Feb 1, 2024 1159 PM/notebook.ipynb", NB, EARLY),
            ("131-471 - Ada Lovelace - Feb 1, 2024 1159 PM/helpers.py", PY, LATER),
            ("index.html", "<html></html>", EARLY),
        ],
    )
    inputs, by = got(tmp_path, archive)
    assert sorted(by) == ["ada_lovelace", "émile_zola"]
    assert by["émile_zola"].source.endswith("130-470 - Émile Zola - Feb 2, 2024 905 AM/hw.ipynb")
    assert by["ada_lovelace"].path.name == "notebook.ipynb"
    assert any("2 Brightspace submissions under the name 'Émile Zola'" in n for n in inputs.notes)


def test_legacy_zip_names_are_decoded_as_the_tool_wrote_them(tmp_path):
    utf8 = LegacyName("José_1_2_hw.ipynb".encode())  # UTF-8 bytes, no flag: Canvas, Moodle, Linux, macOS
    assert utf8.filename == "Jos├⌐_1_2_hw.ipynb"  # what zipfile alone shows (the garbling seen)
    cp437 = LegacyName("José_3_4_hw.ipynb".encode("cp437"))  # Windows' own zip folders
    archive = make_zip(
        tmp_path / "legacy.zip",
        [("José_1_2_hw.ipynb".encode(), NB, EARLY), ("Zoë_3_4_hw.ipynb".encode("cp437"), NB + " ", EARLY)],
    )
    with zipfile.ZipFile(archive) as z:
        names = [zip_name(i) for i in z.infolist()]
    assert names == ["José_1_2_hw.ipynb", "Zoë_3_4_hw.ipynb"]
    assert cp437.filename == "José_3_4_hw.ipynb"
    inputs, by = got(tmp_path, archive)
    assert sorted(by) == ["josé_1", "zoë_3"]


def test_no_csv_cell_can_be_a_formula(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    evil = subs / '=HYPERLINK("evil.example";"click").py'
    evil.write_text(PY)
    (subs / "@SUM(A1).py").write_text(PY)
    (subs / "alice.py").write_text(PY)
    inputs = expand([subs], tmp_path)
    results = [
        SubmissionResult(
            submission=e.submission, path=e.source, assignment="demo", student=e.student, error="-2+3 cmd|' /C calc'!A0"
        )
        for e in inputs.entries
    ]
    write_gradebook(results, tmp_path / "gradebook.csv", ["basics"], {e.student: e.name for e in inputs.entries})
    rows = inputs_rows(tmp_path, inputs)
    cells = [c for r in rows for c in r.values()]
    with open(tmp_path / "gradebook.csv", newline="") as f:
        cells += [c for row in csv.reader(f) for c in row]
    assert any(c.startswith("'=HYPERLINK") for c in cells) and any(c.startswith("'@SUM") for c in cells)
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert safe_cell("-1.5") == "-1.5" and safe_cell("\t=1") == "'\\t=1" and safe_cell("+1 cmd") == "'+1 cmd"


def test_every_csv_writer_uses_the_one_helper():
    root = Path(__file__).resolve().parents[2] / "autograder"
    writers = [p for p in root.rglob("*.py") if "csv.writer(" in p.read_text() or "DictWriter(" in p.read_text()]
    assert [p.name for p in writers] == ["csvfile.py"]


def test_a_batch_with_hostile_names_grades_everyone_as_themselves(tmp_path):
    """Issue 10.9 and 10.10 end to end: honest bob, mallory's file named as bob's future attempt, a formula name."""
    from tests.batch.test_runner import REF, SQUARES, gradebook, tg

    archive = make_zip(
        tmp_path / "gradebook_hw.zip",
        [
            ("Homework 3_bob_attempt_2024-02-01-10-00-00_hw.py", REF, EARLY),
            ("Homework 3_mallory_attempt_2024-02-01-11-00-00_x_bob_attempt_2099-12-31-23-59-59_y.py", SQUARES, FUTURE),
        ],
    )
    folder = tmp_path / "late"
    folder.mkdir()
    (folder / '=HYPERLINK("evil.example";"open me").py').write_text(REF)
    out = tmp_path / "out"
    p = tg(str(archive), str(folder), "--out", str(out), "--jobs", "1", "--exercise", "basics")
    assert p.returncode == 0, p.stderr
    book = {r["student"]: r for r in gradebook(out)}
    eve = "HYPERLINK_evil.example_open_me"
    assert {s: r["total"] for s, r in book.items()} == {"bob": "4", "mallory": "3", eve: "4"}
    assert book[eve]["submission"].startswith("'=HYPERLINK")
    assert "claims student bob" in p.stderr
    rows = list(csv.DictReader((out / "inputs.csv").read_text(encoding="utf-8").splitlines()))
    assert [r["fate"] for r in rows if "x_bob_attempt" in r["source"]] == ["graded"]
    for f in ("gradebook.csv", "inputs.csv"):
        with open(out / f, newline="", encoding="utf-8") as fh:
            assert not [c for row in csv.reader(fh) for c in row if c.startswith(("=", "+", "@", "\t", "\r"))]


def test_a_moodle_name_that_parses_two_ways_is_flagged_and_never_merged(tmp_path):
    """Issue 22: a full name edited to ``Bob Smith_777_assignsubmission_file`` is not Bob's newer attempt."""
    archive = make_zip(tmp_path / "moodle.zip", [
        ("Bob Smith_777_assignsubmission_file_hw.ipynb", NB, EARLY),
        ("Bob Smith_777_assignsubmission_file_999_assignsubmission_file_hw.ipynb", NB + "  ", LATER),
        ("Ann Lee_5_assignsubmission_file_x_6_assignsubmission_file_.ipynb", NB + "   ", LATER),
    ])
    inputs, by = got(tmp_path, archive)
    assert inputs.superseded == []  # Bob's own file still counts
    assert tail(by["bob_smith_777"]).startswith("Bob Smith_777_assignsubmission_file_hw")
    odd = [e for e in inputs.entries if e.student != "bob_smith_777"]
    assert len(odd) == 2 and len({e.student for e in odd}) == 2  # each on an id of its own, not merged either
    assert all(e.student.startswith("ambiguous-") for e in odd)
    notes = "\n".join(inputs.notes)
    assert notes.count("FLAGGED") == 2 and "'Bob Smith_777_assignsubmission_file' (participant id 999)" in notes
    rows = inputs_rows(tmp_path, inputs)
    assert sum("FLAGGED" in r["detail"] for r in rows) == 2


def test_an_ambiguous_moodle_name_is_flagged_in_the_gradebook_and_the_report(tmp_path):
    """Issue 22: the gradebook's ``flagged`` column (and the report's flags) mark a name that parses two ways."""
    from autograder.assignment import load_assignment
    from autograder.batch.review import review_class
    from autograder.report.classreport import class_report_html
    from tests.helpers import DEMO_COURSE

    # Moodle's own names ("Download submissions in folders" off): <full name>_<id>_assignsubmission_file_<file>
    archive = make_zip(tmp_path / "CS101-Homework 3-12345.zip", [
        ("Bob Smith_777_assignsubmission_file_hw.py", PY, EARLY),
        ("Bob Smith_777_assignsubmission_file_999_assignsubmission_file_hw.py", PY + "# mine\n", LATER),
        ("José Núñez_42_assignsubmission_onlinetext_onlinetext.html", "<p>see file</p>", EARLY),
        ("José Núñez_42_assignsubmission_file_tarea.py", PY.replace("2 * x", "x + x"), EARLY),
    ])
    inputs, by = got(tmp_path, archive)
    review = review_class(load_assignment("demo", DEMO_COURSE), inputs.entries, similarity=False)
    results = [SubmissionResult(submission=e.submission, path=e.source, assignment="demo", student=e.student)
               for e in inputs.entries]
    write_gradebook(results, tmp_path / "gradebook.csv", ["basics"], attention=review.attention)
    book = {r["student"]: r for r in csv.DictReader((tmp_path / "gradebook.csv").read_text().splitlines())}
    odd = [s for s in book if s.startswith("ambiguous-moodle-")]
    assert len(odd) == 1 and set(book) == {"bob_smith_777", "josé_núñez_42", odd[0]}
    assert book[odd[0]]["flagged"] == "yes"
    assert "ambiguous LMS name" in book[odd[0]]["review"] and "participant id 999" in book[odd[0]]["review"]
    assert book["bob_smith_777"]["flagged"] == "" and book["josé_núñez_42"]["flagged"] == ""
    told = [a.student for a in review.attention[odd[0]]]
    assert told and "Bob" not in told[0] and "999" not in told[0]  # the student never reads another's name
    page = class_report_html(results, title="HW3", exercise_ids=["basics"], attention=review.attention, plots=False)
    assert "ambiguous name" in page


def test_symbolic_links_in_a_folder_are_never_followed_and_each_is_reported(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_notes.py").write_text("TA_TOKEN = 'sk-live-123'\n")
    (outside / "stash").mkdir()
    (outside / "stash" / "eve.py").write_text(PY)
    make_zip(outside / "carol.zip", [("carol.py", PY, EARLY)])
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(PY)
    (subs / "mallory.py").symlink_to(outside / "secret_notes.py")
    (subs / "dave.zip").symlink_to(outside / "carol.zip")
    (subs / "eve").symlink_to(outside / "stash", target_is_directory=True)
    (subs / "notes.txt").symlink_to("/etc/hostname")
    work = tmp_path / "work"
    work.mkdir()
    inputs = expand([subs, subs / "mallory.py"], work)
    assert [e.student for e in inputs.entries] == ["alice"]
    refused = sorted(Path(p.split(":")[0]).relative_to(tmp_path).as_posix()
                     for p in inputs.problems if "symbolic link" in p)
    assert refused == ["subs/dave.zip", "subs/eve", "subs/mallory.py", "subs/mallory.py", "subs/notes.txt"]
    rows = inputs_rows(tmp_path, inputs)
    assert len([r for r in rows if "symbolic link" in r["detail"]]) == len(refused)
    assert "sk-live" not in (tmp_path / "inputs.csv").read_text()


def test_nested_archives_share_one_budget_per_upload(tmp_path):
    """Issue 22: each level once got a fresh budget, so a small upload of zips in zips expanded without bound."""
    import io

    from autograder.batch.inputs import ArchiveLimits

    inner = []
    for i in range(3):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"part{i}.py", "#" * 40_000 + "\n" + PY)
        inner.append(buf.getvalue())
    upload = make_zip(tmp_path / "upload.zip", [(f"s{i}_1_{i}_work.zip", z, EARLY) for i, z in enumerate(inner)])
    assert upload.stat().st_size < 5_000
    work = tmp_path / "work"
    work.mkdir()
    inputs = expand([upload], work, limits=ArchiveLimits(max_total_bytes=100_000))
    assert len(inputs.entries) == 2, inputs.entries  # the third inner archive would pass the upload's budget
    assert any("s2_1_2_work.zip" in p and "one budget covers every archive" in p for p in inputs.problems)
    written = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
    assert written <= 100_000
