"""Student- and LMS-controlled text is shown, never acted on: not as Markdown or HTML, not as terminal codes.

Markdown is rendered with markdown-it (CommonMark, as Gradescope and most LMS viewers render it); a
student value that became an image, a link or raw HTML, or a fence closed early, fails here.
"""

from __future__ import annotations

import io
import json
import re

from markdown_it import MarkdownIt

from autograder.batch.progress import PlainProgress
from autograder.report.csvfile import write_csv
from autograder.report.feedback_page import feedback_html
from autograder.report.submission import console_report, feedback_markdown, gradescope_results, write_submission
from autograder.results import CellResult, ExerciseResult, Flag, SubmissionResult
from autograder.results import TestResult as _Test

IMAGE = "![](http://evil.example/pixel.png)"
HTML = "<img src=x onerror=alert(1)>"
FENCE = "```\n" + IMAGE + "\n````"
TERMINAL = "\x1b[2J\x1b]8;;http://evil.example\x07link\x1b]8;;\x07\x9b31mred\rOVERWRITTEN\x7f"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def hostile_result() -> SubmissionResult:
    msg = f"expected 3, got {IMAGE} {HTML}\n{FENCE}\n[click](http://evil.example) {TERMINAL}"
    return SubmissionResult(
        submission=f"mallory{TERMINAL}", path="x.py", assignment="a", student=f"{IMAGE}{HTML}\x1b[31m",
        error=f"could not read: {FENCE} {HTML}", status="graded",
        cells=[CellResult(index=2, status="error", message=f"ValueError: {FENCE}\n{HTML}{TERMINAL}",
                          label=f"cell 2 (`{IMAGE}`)")],
        flags=[Flag(cell=2, line=1, where=f"cell 2 ({IMAGE})", reason=f"rebinds {HTML}")],
        exercises=[ExerciseResult(id="ex", title="Exercise", max_points=2, tests=[
            _Test(nodeid="t1", name="returns the sum", exercise="ex", max_points=1, status="failed", message=msg),
            _Test(nodeid="t2", name="keeps shape", exercise="ex", max_points=1, status="passed", points=1)])],
    )


def _rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def _assert_nothing_rendered(html: str) -> None:
    assert "<img" not in html and "<a " not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
    assert "<img src=x" not in html


def test_feedback_md_never_renders_student_text():
    md = feedback_markdown(hostile_result())
    html = _rendered(md)
    _assert_nothing_rendered(html)
    assert CONTROL.search(md) is None  # no terminal code reaches a TA who cats the file
    # each fenced message comes out whole, in one code block: the ``` inside did not close the fence
    assert html.count("<pre><code") == 3, html
    for block in re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", html, re.S):
        assert "http://evil.example/pixel.png" in block
    assert "<h1>Feedback: !" in html  # the title shows the name as text


def test_results_json_never_renders_student_text():
    data = gradescope_results(hostile_result())
    outputs = [data["output"]] + [t["output"] for t in data["tests"]]
    assert data["output_format"] == "md" and {t["output_format"] for t in data["tests"]} == {"md"}
    for out in outputs:
        _assert_nothing_rendered(_rendered(out))
        assert CONTROL.search(out) is None
    failing = _rendered(data["tests"][0]["output"])
    assert failing.count("<pre><code") == 1 and "[click](http://evil.example)" in failing


def test_feedback_html_and_every_file_are_written_encodable_and_inert(tmp_path):
    r = hostile_result()
    r.error += " \ud800"  # a lone surrogate: the files are still written
    d = write_submission(r, tmp_path)
    for name in ("results.json", "feedback.md", "feedback.html"):
        text = (d / name).read_text(encoding="utf-8")
        assert CONTROL.search(text) is None, name
    page = (d / "feedback.html").read_text()
    assert "<img" not in page and "\\ud800" in page
    assert json.loads((d / "results.json").read_text())["tests"]
    assert "<img" not in feedback_html(r)


def test_the_console_shows_escapes_never_control_characters():
    r = hostile_result()
    r.status = "internal_error"
    shown = console_report(r, verbose=True)
    assert CONTROL.search(shown) is None and "\\x1b[2J" in shown and "\\rOVERWRITTEN" in shown
    stream = io.StringIO()
    progress = PlainProgress(1, stream)
    r.protections = {"syscalls": f"seccomp {TERMINAL}"}
    progress.advance(r)
    assert CONTROL.search(stream.getvalue()) is None and "mallory\\x1b[2J" in stream.getvalue()


def test_csv_cells_are_one_line_with_controls_escaped(tmp_path):
    path = tmp_path / "x.csv"
    write_csv(path, ["a", "b"], [[f"name{TERMINAL}", "line1\nline2 \ud800"]])
    text = path.read_text(encoding="utf-8")
    assert CONTROL.search(text.replace("\r\n", "")) is None, text
    assert text.count("\n") == 2 and "line1\\nline2 \\ud800" in text
