"""One view-model behind every view of a result: the formats agree, and a shared cause is said once.

The fixture is a result as the judge makes it (no grading: it runs in milliseconds): a cell with a
syntax error that costs two tests naming different functions, a stub that fails three tests alike,
two tests whose failures fit one misconception, a failure shared across two exercises, a grader
error, a timeout and a pass.
"""

from __future__ import annotations

import html as _html
import re

from markdown_it import MarkdownIt

from autograder.checker import check_report
from autograder.report.feedback_page import feedback_body, feedback_html
from autograder.report.submission import console_report, feedback_markdown, gradescope_results
from autograder.report.text import md_inline
from autograder.report.view import MARKS, view
from autograder.results import CellResult, ExerciseResult, SubmissionResult
from autograder.results import TestResult as _Test

CELL = ("cell 3 (`def f(x)`) did not run cleanly (SyntaxError: expected ':'), so the names it defines are "
        "missing. Fix that cell first: every test that needs one of them fails until it runs.")
STUB = "`g` is not implemented yet: it still raises NotImplementedError. Replace the stub's body with your code."
SQUARED = "You squared the values instead of doubling them."
EVERYWHERE = "The Python process running your code stopped while running `setup` (killed)."


def _t(name: str, ex: str, status: str = "failed", message: str = "", max_points: float = 1, **kw) -> _Test:
    points = max_points if status == "passed" else kw.pop("points", 0.0)
    return _Test(nodeid=f"{ex}::{name}", name=name, exercise=ex, max_points=max_points, points=points,
                 status=status, message=message, **kw)  # type: ignore[arg-type]


def fixture() -> SubmissionResult:
    ex1 = [
        _t("f doubles", "one", "error", f"`f` is not defined: {CELL}", 2, cause=CELL),
        _t("h halves", "one", "error", f"`h` is not defined: {CELL}", 1.5, cause=CELL),
        _t("g works", "one", "error", STUB),
        _t("g keeps shape", "one", "error", STUB, 0.5),
        _t("g on big input", "one", "error", STUB),
        _t("k doubles floats", "one", "failed", f"k(x) is 3.0, expected 1.5. {SQUARED}", misconception="squares"),
        _t("k doubles ints", "one", "failed", f"k(x) is 9, expected 3. {SQUARED}", misconception="squares"),
        _t("k passes", "one", "passed"),
        _t("k is quick", "one", "timeout", "`k` did not finish within 10 s."),
        _t("the grader", "one", "grader_error", "The grader itself failed on this test.", 0, withheld=1),
        _t("shared one", "one", "error", EVERYWHERE),
    ]
    ex2 = [_t("shared two", "two", "error", EVERYWHERE), _t("two passes", "two", "passed", max_points=3)]
    return SubmissionResult(
        submission="carol", path="carol.ipynb", assignment="a", student="carol",
        cells=[CellResult(index=3, status="error", message="SyntaxError: expected ':'", label="cell 3 (`def f(x)`)")],
        exercises=[ExerciseResult("one", "Exercise one", 11, ex1), ExerciseResult("two", "Exercise two", 4, ex2)],
    )


def test_the_view_finds_each_shared_cause_once_with_the_tests_it_cost():
    v = view(fixture())
    by_text = {c.text: c for c in v.all_causes}
    assert set(by_text) == {CELL, STUB, SQUARED, EVERYWHERE}
    costs = [(c.exercise, c.name, c.lost) for c in by_text[CELL].costs]
    assert costs == [("one", "f doubles", 2), ("one", "h halves", 1.5)]
    assert by_text[STUB].lost == 2.5 and by_text[STUB].exercise == "one"
    assert by_text[EVERYWHERE].exercise == "" and v.causes == [by_text[EVERYWHERE]]  # spans two exercises
    tests = {t.name: t for t in v.tests}
    assert tests["f doubles"].message == "`f` is not defined" and tests["f doubles"].cause == by_text[CELL].number
    assert tests["g works"].message == "" and tests["g works"].cause == by_text[STUB].number
    assert tests["k doubles ints"].message == "k(x) is 9, expected 3."  # its own facts; the misconception said once
    assert tests["k is quick"].cause == 0 and tests["k is quick"].message  # said by one test only: said there
    assert tests["the grader"].cause == 0  # a grader error is no cost of the student's
    assert v.counts() == {"error": 7, "failed": 2, "passed": 2, "timeout": 1, "grader_error": 1}


def _md_tests(md: str) -> list[tuple[str, str, str]]:
    symbols = "|".join(re.escape(m.symbol) for m in MARKS.values())
    return re.findall(rf"^- ({symbols}) (.+?) \((\d[\d.]*/\d[\d.]*)\)", md, re.M)


def _html_text(page: str) -> str:
    """The page's text as written: its `inline code` spelt with backticks again, entities unescaped."""
    return _html.unescape(re.sub(r"</?code>", "`", page))


def _html_tests(page: str) -> list[tuple[str, str, str]]:
    """(mark's word, test, score) per listed test: the mark is drawn with CSS and named for screen readers."""
    items = re.findall(r'<li data-status="(\w+)"><span class="mark \w+" role="img" aria-label="([^"]+)" '
                       r'title="[^"]+"></span> (.+?) \((\d[\d.]*/\d[\d.]*)\)', page)
    return [(word, _html_text(name), score) for _, word, name, score in items]


def test_markdown_and_html_show_the_same_statuses_messages_and_counts():
    r = fixture()
    v = view(r)
    md, page = feedback_markdown(r), feedback_html(r)
    assert _md_tests(md) == [(t.mark.symbol, t.name, t.score) for t in v.tests]
    # the page lists each exercise's failed tests, then its passing ones folded away: the same tests and marks
    assert sorted(_html_tests(page)) == sorted((t.mark.word, t.name, t.score) for t in v.tests)
    assert "<details><summary>" in page and not re.search("[\u2705\u274c\u26a0\u23f1\u2796]", page)
    # a grader error reads the same in both (it once read ⚠️ in Markdown and ✗ in HTML)
    assert ("⚠️", "the grader", "0/0") in _md_tests(md) and ("GRADER ERROR", "the grader", "0/0") in _html_tests(page)
    rendered = MarkdownIt("commonmark").render(md)
    for text in [c.text for c in v.all_causes] + [t.message for t in v.tests if t.message and not t.brief]:
        assert text in _html.unescape(rendered) and text in _html_text(page), text
    for c in v.all_causes:
        heading = f"Problem {c.number} cost"
        assert md.count(heading) == 1 and page.count(heading) == 1
        refs = sum(t.cause == c.number for t in v.tests)
        assert md.count(f"see problem {c.number} above") == refs == page.count(f"see problem {c.number} above")
    assert md.count(f"Score: {v.score}") == 1 and page.count(f"Score: {v.score}") == 1
    # it opens with one row per exercise, linking to its section
    for ex in v.exercises:
        assert f'<a href="#ex-{ex.id}">' in page and f'id="ex-{ex.id}"' in page
    assert "<code>f</code> is not defined" in page  # inline code shown as code


def test_a_file_that_cannot_be_read_is_one_message_not_a_list_of_every_test():
    r = fixture()
    for e in r.exercises:
        for t in e.tests:
            t.status, t.points, t.message, t.cause = "error", 0, "x.ipynb could not be read (not JSON).", ""
    page = feedback_html(r)
    assert page.count("x.ipynb could not be read") == 1 and "<li data-status" not in page
    assert "Problem 1 cost all" in page and page.count('<a href="#ex-') == len(r.exercises)


def test_a_shared_cause_is_said_once_in_every_format():
    r = fixture()
    v = view(r)
    gs = gradescope_results(r)
    everything = gs["output"] + "".join(t["output"] for t in gs["tests"])
    for text in (feedback_markdown(r), feedback_body(r), console_report(r, verbose=True), check_report(r), everything):
        text = _html.unescape(text) if "<p" in text else text
        for c in v.all_causes:
            assert text.count(c.text) == 1, (c.text, text)
        assert text.count("SyntaxError: expected ':'") == 2  # the cell's own entry, and the cause: not under each test
    assert "[GRADER ERROR] the grader" in console_report(r) and "[TIMEOUT] k is quick" in check_report(r)


def test_student_text_in_a_cause_stays_text_in_every_format():
    r = fixture()
    hostile = "``` ![](http://evil.example/x.png) <img src=x onerror=alert(1)> \x1b[2J\rOVER"
    for t in r.exercises[0].tests[2:5]:
        t.message = hostile
    md, page, shown = feedback_markdown(r), feedback_html(r), console_report(r)
    rendered = MarkdownIt("commonmark").render(md)
    assert "<img" not in rendered and "<img" not in page and "&lt;img src=x" in page
    assert re.search(r"^````text$", md, re.M)  # the fence is longer than the backtick run inside
    for text in (md, page, shown, check_report(r)):
        assert "\x1b" not in text and "\r" not in text
    assert "\\x1b[2J\\rOVER" in shown
    assert md_inline("`f` is not defined") + ": see problem" in md


def test_an_unreadable_submission_says_its_error_once():
    r = fixture()
    r.status, r.error, r.cells = "load_error", "the notebook is not valid JSON (line 3)", []
    for e in r.exercises:
        for t in e.tests:
            t.status, t.points, t.message, t.cause, t.misconception = "error", 0.0, f"Not graded: {r.error}", "", ""
    v = view(r)
    assert len(v.causes) == 1 and not v.all_causes[1:] and v.error == ""
    md = feedback_markdown(r)
    assert md.count(r.error) == 1 and "Problem 1 cost all 13 tests (15 points):" in md and "- one: all" not in md
    assert md.count("see problem 1 above") == 13
