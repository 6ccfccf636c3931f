"""The results database, the gradebook, feedback pages and the class report, on results made by hand."""

from __future__ import annotations

import csv
import json
import re
import shutil

from autograder.assignment import load_assignment
from autograder.batch.store import Store, suite_version
from autograder.report.classreport import class_report_html, class_stats
from autograder.report.feedback_page import feedback_html
from autograder.report.gradebook import write_gradebook
from autograder.report.submission import write_submission
from autograder.report.view import MARKS
from autograder.results import CellResult, ExerciseResult, SubmissionResult
from autograder.results import TestResult as TResult
from tests.helpers import DEMO_COURSE


def result(student, *, double="passed", rows="passed", msg="", status="graded", error="", seconds=1.0, cells=()):
    tests = [
        TResult("n1", "double(x) doubles every entry", "basics", 1, 1 if double == "passed" else 0, double,
                   "" if double == "passed" else msg, 0.1, detail="Traceback: def test_double_values(student): ..."),
        TResult("n2", "row_means(x) averages each row", "basics", 2, 2 if rows == "passed" else 0, rows,
                   "" if rows == "passed" else "`row_means(x)` did not finish within 3 s", 3.0),
    ]
    return SubmissionResult(submission=f"{student}_hw", path=f"subs/{student}_hw.py", assignment="demo",
                            student=student, sha256=student * 4, status=status, error=error, seconds=seconds,
                            exercises=[ExerciseResult("basics", "Tensor basics", 3, tests)], cells=list(cells))


SQUARED = ("double(x) has the right shape and dtype but wrong values. {n} of 12 entries differ; the largest "
           "difference is at index (1, 2): got {got}, expected 1.5. You squared the values instead of doubling them.")


def test_store_commits_each_result_and_counts_gradings(tmp_path):
    r = result("alice")
    with Store(tmp_path / "g.sqlite") as s:
        run = s.open_batch("demo", "v1", ["grade"], 1, 0)
        assert not s.has("demo", "alice", r.sha256, "v1")
        s.put(r, "v1", run_id=run, worker="w0")
    with Store(tmp_path / "g.sqlite") as s:  # another connection sees it: it was committed
        assert s.has("demo", "alice", r.sha256, "v1")
        assert not s.has("demo", "alice", r.sha256, "v2") and not s.has("demo", "alice", "other", "v1")
        back = s.get("demo", "alice", r.sha256, "v1")
        assert back.to_dict() == r.to_dict()
        broken = result("bob", status="internal_error", error="worker died")
        s.put(broken, "v1")
        assert not s.has("demo", "bob", broken.sha256, "v1")  # a grader failure is tried again
        s.put(r, "v1")
        assert s.gradings("demo") == {("alice", r.sha256, "v1"): 2, ("bob", broken.sha256, "v1"): 1}
        assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_suite_version_follows_hidden_material_only(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    v1 = suite_version(load_assignment("demo", course))
    mutants = course / "solutions/demo/basics/mutants"
    mutants.mkdir(exist_ok=True)
    (mutants / "squares_zz_new.py").write_text("def double(x):\n    return x * x\n")
    assert suite_version(load_assignment("demo", course)) == v1
    hidden = course / "solutions/demo/basics/test_hidden.py"
    hidden.write_text(hidden.read_text() + "\n# a changed check\n")
    v2 = suite_version(load_assignment("demo", course))
    assert v2 != v1
    toml = course / "assignments/demo/counter/exercise.toml"
    toml.write_text(toml.read_text().replace("timeout = 3", "timeout = 4"))
    assert suite_version(load_assignment("demo", course)) not in (v1, v2)
    assert suite_version(load_assignment("demo", course, only=["basics"])) != suite_version(
        load_assignment("demo", course))


def test_gradebook_and_feedback_files(tmp_path):
    alice = result("alice", double="failed", msg=SQUARED.format(n=12, got=4.2))
    write_gradebook([alice], tmp_path / "gradebook.csv", ["basics", "counter"], {"alice": "Alice Doe"})
    rows = list(csv.DictReader((tmp_path / "gradebook.csv").read_text().splitlines()))
    assert list(rows[0]) == [
        "submission", "student", "name", "basics", "counter", "total", "max_total", "status", "flagged", "review"
    ]
    assert rows[0] | {} == {"submission": "alice_hw", "student": "alice", "name": "Alice Doe", "basics": "2",
                            "counter": "0",
                            "total": "2", "max_total": "3", "status": "graded", "flagged": "", "review": ""}
    d = write_submission(alice, tmp_path)
    assert d == tmp_path / "alice"
    md, page = (d / "feedback.md").read_text(), (d / "feedback.html").read_text()
    gs = json.loads((d / "results.json").read_text())
    assert gs["score"] == 2 and [t["score"] for t in gs["tests"]] == [0, 2]
    for text in (md, page, json.dumps(gs)):
        assert "You squared the values" in text
        assert "def test_" not in text and "Traceback" not in text  # staff-only detail never reaches students
    assert "<h1>Feedback: alice</h1>" in page and "2 / 3" in page and f'aria-label="{MARKS["failed"].word}"' in page
    assert "<script" not in feedback_html(result("<script>alert(1)</script>"))


def test_class_report_groups_misconceptions_and_lists_errors():
    results = [
        result("alice", double="failed", msg=SQUARED.format(n=12, got=4.2)),
        result("bob", double="failed", msg=SQUARED.format(n=11, got=-0.7), seconds=9.5),
        result("carol", rows="timeout"),
        result("dave", status="load_error", error="dave_hw.ipynb is not a readable Jupyter notebook"),
        result("erin", cells=[CellResult(3, "crashed", "stopped the Python process", 0.1, "cell 3 (`os._exit(1)`)"),
                              CellResult(4, "error", "MemoryError: ", 0.1, "cell 4")]),
        result("fred", double="error", msg="`double` is not implemented yet: it still raises NotImplementedError."),
    ]
    stats = class_stats(results, ["basics"])
    top = stats.misconceptions[0]
    assert (top.count, sorted(top.students)) == (2, ["alice", "bob"])  # same mistake, other numbers
    assert all("not implemented" not in m.example for m in stats.misconceptions)
    double = next(t for t in stats.tests if t.name.startswith("double"))
    assert (double.failed, double.attempts) == (3, 5)  # dave's unreadable file is not an attempt
    kinds = sorted((e.kind, e.student) for e in stats.errors)
    assert kinds == [("crash", "erin"), ("memory", "erin"), ("timeout", "carol"), ("unreadable", "dave")]

    page = class_report_html(results, title="Demo", exercise_ids=["basics"],
                             superseded=[("alice", "old.py", "new.py")], problems=["x.zip: not a readable zip"])
    for heading in ("Score distribution", "Per exercise", "Per test failure rates", "Most common misconceptions",
                    "Slowest submissions", "Errors (4)", "Inputs not graded"):
        assert heading in page
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', page)) == 3
    assert page.index("bob") < page.index("Errors (")  # bob is the slowest
    assert "old.py" in page and "x.zip: not a readable zip" in page
    assert "def test_" not in page and "Traceback" not in page


def test_charts_are_drawn_for_a_class_only():
    """One submission's report (a regrade, a Gradescope run) skips matplotlib; its score is said in words."""
    charts = r'src="data:image/png;base64,'
    one = class_report_html([result("alice", double="failed", msg="wrong")], title="Demo", exercise_ids=["basics"])
    assert charts not in one and "Charts are drawn for a class" in one and "alice: 2 / 3" in one
    assert "Per test failure rates" in one and "1 / 1 (100%)" in one  # the tables are all there
    two = class_report_html([result("alice", double="failed", msg="wrong"), result("bob")], title="Demo",
                            exercise_ids=["basics"])
    assert two.count(charts) == 3 and "Charts are drawn" not in two
    forced = class_report_html([result("alice", double="failed", msg="wrong")], title="Demo",
                               exercise_ids=["basics"], plots=True)
    assert forced.count(charts) == 3
    passed = class_report_html([result("alice"), result("bob")], title="Demo", exercise_ids=["basics"])
    assert passed.count(charts) == 2  # no test failed: no chart of the tests failed most often


def test_progress_plain_lines_and_rich_bar():
    import io

    from autograder.batch.progress import PlainProgress, RichProgress, make_progress

    buf = io.StringIO()
    p = make_progress(3, buf)
    assert isinstance(p, PlainProgress)  # not a terminal: plain lines
    ok = result("alice")
    ok.protections = {"network": "isolated"}
    p.advance(ok)
    p.advance(result("bob", status="load_error", error="bob.ipynb is not a readable Jupyter notebook"))
    lines = buf.getvalue().splitlines()
    assert lines[0] == "Sandbox protections:" and "network" in lines[1]
    assert lines[2].startswith("[1/3] alice_hw: 3 / 3 points") and "0 failed" in lines[2] and "ETA" in lines[2]
    assert lines[3].startswith("[2/3] bob_hw: ") and "LOAD_ERROR: bob.ipynb" in lines[3] and "1 failed" in lines[3]

    buf = io.StringIO()
    with make_progress(2, buf, mode="bar") as bar:
        assert isinstance(bar, RichProgress)
        bar.advance(result("carol", status="internal_error", error="worker died"))
        bar.advance(result("dave"))
    text = buf.getvalue()
    assert "carol_hw: INTERNAL_ERROR: worker died" in text and "2/2" in text and "1 failed" in text
