"""Each student's feedback page (feedback.html, the HTML twin of feedback.md).

Per exercise and test: points and the teaching message. Hidden test code is
never part of a result, so it cannot appear here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from autograder.report.attention import Attention
from autograder.report.html import esc as _e
from autograder.report.html import page as _page
from autograder.report.view import FLAGGED, CauseView, SubmissionView, TestView, cause_heading, refers, view
from autograder.results import SubmissionResult


def feedback_html(r: SubmissionResult, attention: Sequence[Attention] = (), *, v: SubmissionView | None = None) -> str:
    """One student's feedback page (the HTML twin of feedback.md); ``attention``: blank, duplicate, late.

    ``v``: ``view(r, attention)`` when the caller has built it already (one per result, for all its files).
    """
    who = r.student or r.submission
    return _page(f"Feedback: {who}", f"<h1>Feedback: {_e(who)}</h1>\n" + feedback_body(r, attention, v=v))


def feedback_body(r: SubmissionResult, attention: Sequence[Attention] = (), *, v: SubmissionView | None = None) -> str:
    """The page's feedback without its heading and shell (the submission service shows it in its own pages).

    A rendering of :func:`view`, as feedback.md is: the same sections, marks, messages and causes. It opens
    with one row per exercise (its score, a link to its section); passing tests are folded away; a failed
    test is listed once, under its exercise, referring to a shared problem by number; a problem that cost
    every test (a file that cannot be read) is said once, with no list of the tests it cost.
    """
    v = view(r, attention) if v is None else v
    out = [f"<p class=\"score\">Score: {v.score}</p>"]
    everything = any(not c.exercise and len(c.costs) == len(v.tests) for c in v.causes)
    if v.exercises:
        out.append("<table class=\"summary\"><tr><th>exercise</th><th>score</th><th>tests passed</th></tr>")
        out += [f"<tr><td><a href=\"#ex-{_e(ex.id)}\">{_e(ex.title)}</a></td><td class=\"num\">{ex.score}</td>"
                f"<td class=\"num\">{ex.passed} of {len(ex.tests)}</td></tr>" for ex in v.exercises]
        out.append("</table>")
    if v.error:
        out.append(f"<p class=\"fail\">{_code(v.error)}</p>")
    if v.attention:
        out.append("<h2>About your submission</h2><ul class=\"attention\">"
                   + "".join(f"<li data-kind=\"{_e(a.kind)}\">{_code(a.text)}</li>" for a in v.attention) + "</ul>")
    if v.flags:
        out.append(f"<h2>Flagged for review</h2><p>{_e(FLAGGED)}</p><ul>")
        out += [f"<li>{_e(f.where)}: {_code(f.reason)}</li>" for f in v.flags]
        out.append("</ul>")
    if v.cells:
        out.append("<h2>Cells that did not run cleanly</h2><ul>")
        out += [f"<li>{_e(c.where)} ({_e(c.status)})<pre>{_e(c.message)}</pre></li>" for c in v.cells]
        out.append("</ul>")
    if v.causes:
        out.append("<h2>Problems that cost tests in several exercises</h2>")
        out += [_cause(c, v) for c in v.causes]
    for ex in v.exercises:
        out.append(f"<h2 id=\"ex-{_e(ex.id)}\">{_e(ex.title)} (<code>{_e(ex.id)}</code>): {ex.score}</h2>")
        out += [_cause(c, v) for c in ex.causes]
        if everything:
            continue  # every test failed for the one problem said above: no list of them
        failed = [t for t in ex.tests if not t.passed]
        passed = [t for t in ex.tests if t.passed]
        if failed:
            out.append("<ul>" + "".join(_test(t) for t in failed) + "</ul>")
        if passed:
            out.append(f"<details><summary>{len(passed)} passing test{'s' if len(passed) != 1 else ''}</summary>"
                       "<ul>" + "".join(_test(t) for t in passed) + "</ul></details>")
    return "\n".join(out)


def _test(t: TestView) -> str:
    m = t.mark
    item = (f"<li data-status=\"{_e(t.status)}\"><span class=\"mark {m.css}\" role=\"img\" "
            f"aria-label=\"{_e(m.word)}\" title=\"{_e(m.word)}\"></span> {_code(t.name)} ({t.score})")
    own = t.message if not t.passed else ""
    ref = f"<a href=\"#problem-{t.cause}\">{_e(refers(t))}</a>" if t.cause else ""
    if t.brief:
        item += f": {_code(own) + ': ' if own else ''}{ref}"
    else:
        item += f": {ref}" if ref else ""
        item += f"<pre>{_e(own)}</pre>" if own else ""
    return item + "</li>"


def _code(s: str) -> str:
    """Escaped text with its `inline code` shown as code (the backticks of Markdown's own spelling)."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", _e(s))


def _cause(c: CauseView, v: SubmissionView) -> str:
    """A shared problem, said once: its heading and text (the tests it cost are listed under their exercises)."""
    return (f"<div class=\"cause\" id=\"problem-{c.number}\"><p><b>{_e(cause_heading(c, v))}:</b></p>"
            f"<pre>{_e(c.text)}</pre></div>")
