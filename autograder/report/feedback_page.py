"""Each student's feedback page (feedback.html, the HTML twin of feedback.md).

Per exercise and test: points and the teaching message. Hidden test code is
never part of a result, so it cannot appear here.
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.report.attention import Attention
from autograder.report.html import esc as _e
from autograder.report.html import page as _page
from autograder.report.view import FLAGGED, CauseView, SubmissionView, cause_heading, cause_tests, refers, view
from autograder.results import SubmissionResult


def feedback_html(r: SubmissionResult, attention: Sequence[Attention] = (), *, v: SubmissionView | None = None) -> str:
    """One student's feedback page (the HTML twin of feedback.md); ``attention``: blank, duplicate, late.

    ``v``: ``view(r, attention)`` when the caller has built it already (one per result, for all its files).
    """
    who = r.student or r.submission
    return _page(f"Feedback: {who}", f"<h1>Feedback: {_e(who)}</h1>\n" + feedback_body(r, attention, v=v))


def feedback_body(r: SubmissionResult, attention: Sequence[Attention] = (), *, v: SubmissionView | None = None) -> str:
    """The page's feedback without its heading and shell (the submission service shows it in its own pages).

    A rendering of :func:`view`, as feedback.md is: the same sections, marks, messages and causes.
    """
    v = view(r, attention) if v is None else v
    out = [f"<p class=\"score\">Score: {v.score}</p>"]
    if v.error:
        out.append(f"<p class=\"fail\">{_e(v.error)}</p>")
    if v.attention:
        out.append("<h2>About your submission</h2><ul class=\"attention\">"
                   + "".join(f"<li data-kind=\"{_e(a.kind)}\">{_e(a.text)}</li>" for a in v.attention) + "</ul>")
    if v.flags:
        out.append(f"<h2>Flagged for review</h2><p>{_e(FLAGGED)}</p><ul>")
        out += [f"<li>{_e(f.where)}: {_e(f.reason)}</li>" for f in v.flags]
        out.append("</ul>")
    if v.cells:
        out.append("<h2>Cells that did not run cleanly</h2><ul>")
        out += [f"<li>{_e(c.where)} ({_e(c.status)})<pre>{_e(c.message)}</pre></li>" for c in v.cells]
        out.append("</ul>")
    if v.causes:
        out.append("<h2>Problems that cost tests in several exercises</h2>")
        out += [_cause(c, v) for c in v.causes]
    for ex in v.exercises:
        out.append(f"<h2>{_e(ex.title)} (<code>{_e(ex.id)}</code>): {ex.score}</h2>")
        out += [_cause(c, v) for c in ex.causes]
        out.append("<ul>")
        for t in ex.tests:
            m = t.mark
            item = (f"<li data-status=\"{_e(t.status)}\"><span class=\"{m.css}\" title=\"{_e(m.word)}\">"
                    f"{m.symbol}</span> {_e(t.name)} ({t.score})")
            own = t.message if not t.passed else ""
            ref = f"<a href=\"#problem-{t.cause}\">{_e(refers(t))}</a>" if t.cause else ""
            if t.brief:
                item += f": {_e(own) + ': ' if own else ''}{ref}"
            else:
                item += f": {ref}" if ref else ""
                item += f"<pre>{_e(own)}</pre>" if own else ""
            out.append(item + "</li>")
        out.append("</ul>")
    return "\n".join(out)


def _cause(c: CauseView, v: SubmissionView) -> str:
    tests = cause_tests(c, v)
    listed = "<ul>" + "".join(f"<li>{_e(t)}</li>" for t in tests) + "</ul>" if tests else ""
    return (f"<div class=\"cause\" id=\"problem-{c.number}\"><p><b>{_e(cause_heading(c, v))}:</b></p>"
            f"<pre>{_e(c.text)}</pre>{listed}</div>")
