"""What a TA opens first: the class report's student table, the review flags, misconceptions, charts, console lines.

On results made by hand (the batch end to end is tests/batch/test_ta_batch.py;
the page in a real browser is tests/report/test_report_browser.py).
"""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

from autograder.report.attention import Attention, Submitted, class_attention, is_blank
from autograder.report.classreport import class_report_html, class_stats, exercises_figure, failing_tests_figure
from autograder.report.feedback_page import feedback_html
from autograder.report.gradebook import write_gradebook
from autograder.report.submission import feedback_markdown
from autograder.results import ExerciseResult, SubmissionResult
from autograder.results import TestResult as TResult
from tests.helpers import DEMO_COURSE
from tests.report.test_classreport import result

STUB = "\n\n".join((DEMO_COURSE / "assignments/demo" / ex / "stub.py").read_text() for ex in ("basics", "counter"))


class Table(HTMLParser):
    """The rows of the first ``<table>`` whose class has ``cls``: each cell's text and its links."""

    def __init__(self, cls: str) -> None:
        super().__init__()
        self.cls, self.depth, self.rows, self.links = cls, 0, [], []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and self.cls in (a.get("class") or "").split() and not self.rows:
            self.depth = 1
        elif self.depth and tag == "tr":
            self.rows.append([])
            self.links.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = []
        elif self.depth and tag == "a" and self.links:
            self.links[-1].append(a.get("href"))

    def handle_endtag(self, tag):
        if self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None
        elif self.depth and tag == "table":
            self.depth = 0

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def table(page: str, cls: str) -> tuple[list[list[str]], list[list[str]]]:
    t = Table(cls)
    t.feed(page)
    return t.rows, t.links


# ---------------------------------------------------------------------- 6. the student table
def test_the_report_lists_every_submission_with_points_status_flags_and_a_link_to_its_feedback():
    results = [result("zoe", double="failed", msg="wrong"), result("ana"),
               result("ben", status="load_error", error="ben_hw.ipynb is not a readable Jupyter notebook"),
               result("<b>x</b>")]
    attention = {"ana": [Attention("late", "late (Canvas marked the file LATE)", "Submitted late.")]}
    page = class_report_html(results, title="Demo", exercise_ids=["basics"], names={"zoe": "Zoë Z"},
                             attention=attention, plots=False)
    rows, links = table(page, "students")
    assert rows[0] == ["student", "name", "total", "status", "flags", "basics"]
    body = {r[0]: r for r in rows[1:]}
    assert len(body) == 4  # every submission, the unreadable one too
    assert body["zoe"][1:] == ["Zoë Z", "2 / 3", "graded", "", "2"]
    assert body["ana"][2:5] == ["3 / 3", "graded", "late"]
    assert body["ben"][3] == "load error"
    assert sorted(ln[0] for ln in links[1:]) == ["ana/feedback.html", "b_x_b/feedback.html", "ben/feedback.html",
                                                 "zoe/feedback.html"]
    assert "<b>x</b>" not in page  # a student id is data
    assert page.index("Students (4)") < page.index("Score distribution")  # the first thing on the page


# ---------------------------------------------------------------------- 7. blank, duplicate, late
def test_blank_duplicate_and_late_are_found_and_said_in_the_gradebook_the_report_and_the_feedback(tmp_path):
    written = STUB.replace("def double(x):\n    raise NotImplementedError", "def double(x):\n    return x * 2")
    executed_stub = "# %%\n" + STUB.replace("import torch", "import torch  # I ran this") + "\n\ncheck('basics')\n"
    assert is_blank(STUB, STUB) and is_blank(executed_stub, STUB) and not is_blank(written, STUB)
    subs = [Submitted("ann", "aaa", STUB), Submitted("ben", "bbb", written), Submitted("quinn", "bbb", written),
            Submitted("dan", "ddd", written.replace("x * 2", "2 * x"), late="Canvas marked the file LATE"),
            Submitted("eve", "aaa", STUB), Submitted("fay", "fff", None)]
    found = {s: sorted(a.kind for a in v) for s, v in class_attention(subs, STUB).items()}
    # two untouched stubs are the same file, but no copy: blank only
    assert found == {"ann": ["blank"], "ben": ["duplicate"], "quinn": ["duplicate"], "dan": ["late"], "eve": ["blank"]}
    attention = class_attention(subs, STUB)
    assert "quinn" in attention["ben"][0].staff and "bbb" in attention["ben"][0].staff

    results = [result(s.student) for s in subs]
    write_gradebook(results, tmp_path / "gradebook.csv", ["basics"], attention=attention)
    book = {r["student"]: r for r in csv.DictReader((tmp_path / "gradebook.csv").read_text().splitlines())}
    assert book["ann"]["flagged"] == "yes" and book["ann"]["review"].startswith("blank submission")
    assert book["ben"]["flagged"] == "yes" and "identical to quinn" in book["ben"]["review"]
    assert book["dan"]["flagged"] == "yes" and "late (Canvas marked the file LATE)" in book["dan"]["review"]
    assert book["fay"]["flagged"] == "" and book["fay"]["review"] == ""

    page = class_report_html(results, title="Demo", exercise_ids=["basics"], attention=attention, plots=False)
    rows, _ = table(page, "students")
    flags = {r[0]: r[4] for r in rows[1:]}
    assert flags["ann"] == "blank" and flags["ben"] == "duplicate" and flags["dan"] == "late" and flags["fay"] == ""
    assert "Flagged for review (5)" in page and "identical to ben" in page

    for text in (feedback_markdown(results[1], attention["ben"]), feedback_html(results[1], attention["ben"])):
        assert "identical to another submission" in text and "quinn" not in text  # no other student's name
    assert "unchanged stub" in feedback_markdown(results[0], attention["ann"])
    assert "Submitted late" in feedback_html(results[3], attention["dan"])


# ---------------------------------------------------------------------- 9. misconceptions and charts
def _softmax_result(student: str, wrong: bool) -> SubmissionResult:
    tests = []
    for i in range(6):
        msg = (f"softmax_ce_grad(logits, target) on batch {i} of shape ({i + 2}, 5): the values are wrong. The "
               f"gradient is {i + 2} times too large: divide the summed gradient by the batch size.")
        tests.append(TResult(f"t{i}", f"softmax_ce_grad matches the reference on batch {i}", "softmax_grad", 1,
                             0 if wrong else 1, "failed" if wrong else "passed", msg if wrong else "",
                             misconception="no_mean" if wrong else ""))
    return SubmissionResult(submission=student, path=f"{student}.py", assignment="a", student=student,
                            exercises=[ExerciseResult("softmax_grad", "Softmax", 6, tests)])


def test_one_mistake_is_one_misconception_row_with_its_tests_and_students():
    results = [_softmax_result("amy", True), _softmax_result("bo", True), _softmax_result("cy", False)]
    stats = class_stats(results, ["softmax_grad"])
    assert len(stats.misconceptions) == 1
    m = stats.misconceptions[0]
    assert m.count == 2 and m.students == ["amy", "bo"] and len(m.tests) == 6 and set(m.tests.values()) == {2}
    page = class_report_html(results, title="Demo", exercise_ids=["softmax_grad"], plots=False)
    rows, _ = table(page, "misconceptions")
    assert len(rows) == 2  # the header and one row, not six
    assert rows[1][0].startswith("2 (67%)") and "amy, bo" in rows[1][4]
    assert all(f"on batch {i} (2)" in rows[1][3] for i in range(6))


def test_one_exception_on_several_inputs_is_one_row():
    """Without a suite's key, the same exception raised by each test's input is still one mistake."""
    r = _softmax_result("amy", True)
    for i, t in enumerate(r.exercises[0].tests):
        t.misconception = ""
        t.message = f"softmax_ce_grad on ({i + 2}, 5) float64 logits raised IndexError: index {i + 5} is out of bounds."
    assert len(class_stats([r], ["softmax_grad"]).misconceptions) == 1
    for i, t in enumerate(r.exercises[0].tests):  # the same wrong values, each test its own input
        t.message = (f"The gradient returned by softmax_ce_grad on ({i + 1}, 3) float64 logits{' of scale 3' * i} "
                     f"has the right shape and dtype but wrong values. {i + 2} of {i + 9} entries differ.")
    rows = class_stats([r], ["softmax_grad"]).misconceptions
    assert len(rows) == 1 and len(rows[0].tests) == 6


def test_long_test_names_are_whole_in_the_chart_and_the_legend_covers_no_bar():
    long = ("flatten_any(x) returns a row-major flattening that is a view of x whenever x's strides allow it "
            "and a copy only when they do not, for every layout of the statement's table")
    r = result("amy", double="failed", msg="wrong")
    r.exercises[0].tests[0].name = long
    stats = class_stats([r, result("bo")], ["basics", *[f"exercise_{i}" for i in range(9)], "last_exercise"])
    fig = failing_tests_figure(stats)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert " ".join(labels[0].split()) == f"basics: {long}"  # wrapped over lines, never cut

    fig = exercises_figure(stats)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    assert bars and not any(legend.overlaps(b) for b in bars)
    assert legend.y0 >= ax.get_window_extent(renderer).y1 - 1  # above the axes: the last bar stays in sight


def test_the_failing_tests_chart_shows_only_tests_someone_failed_and_a_class_that_passed_gets_none():
    passed = [result("amy"), result("bo")]
    assert failing_tests_figure(class_stats(passed, ["basics"])) is None
    page = class_report_html(passed, title="Demo", exercise_ids=["basics"])
    assert "No test failed." in page and 'alt="tests failed most often"' not in page
    assert "row_means(x) averages each row" in page  # the per-test table still lists every test

    one_failed = [result("amy", double="failed", msg="wrong"), result("bo")]
    fig = failing_tests_figure(class_stats(one_failed, ["basics"]))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["basics: double(x) doubles every entry"]
    page = class_report_html(one_failed, title="Demo", exercise_ids=["basics"])
    assert 'alt="tests failed most often"' in page and "No test failed." not in page


# ---------------------------------------------------------------------- 10. console lines
def test_a_console_line_never_stops_mid_sentence():
    from autograder.batch.progress import make_progress

    error = ("erin.ipynb is not a readable Jupyter notebook (Notebook does not appear to be JSON: '<<<<<<< HEAD\\n{"
             "\\n \"cells\": [\\n {\\n \"...). It may have been damaged by a text editor or a merge: open it in "
             "Jupyter, or download it again, and resubmit.")
    buf = io.StringIO()
    make_progress(1, buf).advance(result("erin", status="load_error", error=error))
    line = buf.getvalue().splitlines()[-1]
    assert "download it again, and resubmit.  | 1 failed" in line
    long = "word " * 200 + "end."
    buf = io.StringIO()
    make_progress(1, buf).advance(result("x", status="load_error", error=long))
    line = buf.getvalue().splitlines()[-1]
    assert "word word...  | 1 failed" in line  # one overlong sentence is cut at a word and says so
