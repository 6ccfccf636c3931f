"""Each student's feedback page (feedback.html, the HTML twin of feedback.md).

Per exercise and test: points and the teaching message. Hidden test code is
never part of a result, so it cannot appear here.
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.report.attention import Attention
from autograder.report.html import esc as _e
from autograder.report.html import page as _page
from autograder.report.text import pts as _pts
from autograder.results import SubmissionResult


def feedback_html(r: SubmissionResult, attention: Sequence[Attention] = ()) -> str:
    """One student's feedback page (the HTML twin of feedback.md); ``attention``: blank, duplicate, late."""
    who = r.student or r.submission
    return _page(f"Feedback: {who}", f"<h1>Feedback: {_e(who)}</h1>\n" + feedback_body(r, attention))


def feedback_body(r: SubmissionResult, attention: Sequence[Attention] = ()) -> str:
    """The page's feedback without its heading and shell (the submission service shows it in its own pages)."""
    out = [f"<p class=\"score\">Score: {_pts(r.total)} / {_pts(r.max_total)}</p>"]
    if r.error:
        out.append(f"<p class=\"fail\">{_e(r.error)}</p>")
    if attention:
        out.append("<h2>About your submission</h2><ul class=\"attention\">"
                   + "".join(f"<li data-kind=\"{_e(a.kind)}\">{_e(a.student)}</li>" for a in attention) + "</ul>")
    if r.flags:
        out.append("<h2>Flagged for review</h2><p>Your code touches the grader or the interpreter's internals "
                   "in the places below, so a member of staff will look at it. Your points are as measured.</p><ul>")
        out += [f"<li>{_e(f.where)}: {_e(f.reason)}</li>" for f in r.flags]
        out.append("</ul>")
    bad = [c for c in r.cells if c.status != "ok"]
    if bad:
        out.append("<h2>Cells that did not run cleanly</h2><ul>")
        for c in bad:
            out.append(f"<li>{_e(c.label or f'cell {c.index}')} ({_e(c.status)})<pre>{_e(c.message)}</pre></li>")
        out.append("</ul>")
    for ex in r.exercises:
        out.append(f"<h2>{_e(ex.title)} (<code>{_e(ex.id)}</code>): {_pts(ex.points)} / {_pts(ex.max_points)}</h2>")
        out.append("<ul>")
        for t in ex.tests:
            ok = t.status == "passed"
            mark = "<span class=\"pass\">&#10003;</span>" if ok else "<span class=\"fail\">&#10007;</span>"
            item = f"<li>{mark} {_e(t.name)} ({_pts(t.points)}/{_pts(t.max_points)})"
            if not ok and t.message:
                item += f"<pre>{_e(t.message)}</pre>"
            out.append(item + "</li>")
        out.append("</ul>")
    return "\n".join(out)
