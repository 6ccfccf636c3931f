"""Stage 4 (report): every output is a view of the same SubmissionResult."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from autograder.printable import printable
from autograder.report.attention import Attention
from autograder.report.feedback_page import feedback_html
from autograder.report.files import write_atomic
from autograder.report.text import block_lines, md_block, md_inline
from autograder.report.text import pts as _pts
from autograder.report.view import FLAGGED, CauseView, SubmissionView, cause_heading, cause_tests, refers, view
from autograder.results import SubmissionResult


def console_report(r: SubmissionResult, *, verbose: bool = False) -> str:
    """The per-submission report printed by ``torchgrader grade`` (a rendering of :func:`view`).

    Every student-derived string goes through :func:`printable`: a name or a
    message can never move the cursor, clear the screen or overwrite a line.
    """
    v = view(r)
    lines = [f"== {printable(r.submission)}: {v.score} points ({r.seconds:.1f} s)"]
    if v.error:
        lines.append(f"   {printable(v.error)}")
    if v.review:
        lines.append(f"   REVIEW: {printable(v.review)}")
    for c in v.cells:
        lines.append(f"   ! {printable(c.where)} {printable(c.status)}: {printable(c.first_line)}")
    for cause in v.causes:
        lines += console_cause(cause, v, "   ")
    for e in v.exercises:
        lines.append(f"   {e.id:<18} {_pts(e.points):>5} / {_pts(e.max_points):<5} {e.title}")
        for cause in e.causes:
            lines += console_cause(cause, v, "      ")
        for t in e.tests:
            if t.passed and not verbose:
                continue
            line = f": {printable(t.on_its_line)}" if t.on_its_line else ""
            lines.append(f"      [{t.mark.word}] {t.name} ({t.score}){line}")
            if t.below:
                lines += [f"         {m}" for m in block_lines(t.below)]
    return "\n".join(lines)


def console_cause(c: CauseView, v: SubmissionView, indent: str, *, points: bool = True) -> list[str]:
    """A shared cause on the console: what it cost, then its sentence (at most 12 lines)."""
    lines = [f"{indent}{cause_heading(c, v, points=points)}:"]
    lines += [f"{indent}   {m}" for m in block_lines(c.text)]
    if not c.exercise:  # the tests of its own exercise follow, each referring to it
        lines += [f"{indent}   - {t}" for t in cause_tests(c, v, points=points)]
    return lines


def protections_report(protections: dict[str, str]) -> str:
    lines = ["Sandbox protections:"]
    for k, v in protections.items():
        warn = "  <-- WARNING" if v.startswith(("NOT", "per process only")) else ""
        lines.append(f"  {printable(k):<11} {printable(v)}{warn}")
    return "\n".join(lines)


def gradescope_results(r: SubmissionResult, *, v: SubmissionView | None = None) -> dict:
    """Gradescope's results.json for one submission (visible feedback, no test code), a rendering of :func:`view`.

    Gradescope renders ``md`` outputs, so every message (it carries student
    values) is a fenced block there: shown as written, never as Markdown or HTML.
    A cause several tests share is said once, in the submission's output above the tests.
    ``v``: the result's view when built already (its attention, if any, is not part of Gradescope's file).
    """
    v = view(r) if v is None else v
    tests = []
    for e in v.exercises:
        for t in e.tests:
            own = "\n".join(md_block(t.message)) if t.message and not t.passed else ""
            tests.append({
                "name": f"{e.id}: {t.name}",
                "score": t.points,
                "max_score": t.max_points,
                "status": "passed" if t.passed else "failed",
                "output": "\n\n".join(p for p in (own, f"({refers(t)})" if t.cause else "") if p),
                "output_format": "md",
                "visibility": "visible",
                "tags": [e.id],
            })
    parts = [md_block(v.error)] if v.error else []
    parts += [[f"{md_inline(c.where)} {md_inline(c.status)}:", *md_block(c.message)] for c in v.cells]
    for cause in v.all_causes:
        where = f"{cause.exercise}: " if cause.exercise else ""
        parts.append([f"**{where}{cause_heading(cause, v)}:**", *md_block(cause.text),
                      *(f"- {t}" for t in cause_tests(cause, v))])
    return {
        "score": r.total,
        "execution_time": round(r.seconds, 3),
        "output": "\n\n".join("\n".join(p) for p in parts),
        "output_format": "md",
        "test_output_format": "md",
        "test_name_format": "text",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def safe_name(name: str) -> str:
    """A student id as a folder name: letters of any script kept (ids carry non-ASCII names), nothing else."""
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "submission"


def submission_dir(r: SubmissionResult, out: Path) -> Path:
    """Per-student outputs live in ``out/<student>/`` (the submission's name when no student is known)."""
    return out / safe_name(r.student or r.submission)


def write_submission(r: SubmissionResult, out: Path, attention: Sequence[Attention] = ()) -> Path:
    """results.json (Gradescope), feedback.md and feedback.html: what the student gets.

    ``attention`` (blank, duplicate, late) is known only once the class is in: the batch writes the
    feedback again then, for the students it concerns.
    """
    d = submission_dir(r, out)
    d.mkdir(parents=True, exist_ok=True)
    v = view(r, attention)  # one view-model, three renderings
    # compact: json's C encoder (an indented dump takes its pure-Python one, the most of this function's time)
    write_atomic(d / "results.json", json.dumps(gradescope_results(r, v=v)))
    write_atomic(d / "feedback.md", feedback_markdown(r, attention, v=v))
    write_atomic(d / "feedback.html", feedback_html(r, attention, v=v))
    return d


def feedback_markdown(r: SubmissionResult, attention: Sequence[Attention] = (), *,
                      v: SubmissionView | None = None) -> str:
    """What a student reads: per exercise and test, points and the teaching message; never test code.

    A rendering of :func:`view`. Student- and LMS-derived text (names, errors, messages, flags) is never
    rendered: inline it is escaped (:func:`md_inline`), blocks are fenced
    with a fence longer than any backtick run inside (:func:`md_block`).
    ``attention``: blank, duplicate, late (what staff will look at); ``v``: ``view(r, attention)`` if built.
    """
    v = view(r, attention) if v is None else v
    out = [f"# Feedback: {md_inline(v.who)}", "", f"**Score: {v.score}**", ""]
    if v.error:
        out += [*md_block(v.error), ""]
    if v.attention:
        out += ["## About your submission", ""] + [f"- {md_inline(a.text)}" for a in v.attention] + [""]
    if v.flags:
        out += ["## Flagged for review", "", FLAGGED, ""]
        out += [f"- {md_inline(f.where)}: {md_inline(f.reason)}" for f in v.flags] + [""]
    if v.cells:
        out += ["## Cells that did not run cleanly", ""]
        for c in v.cells:
            out += [f"- {md_inline(c.where)} ({md_inline(c.status)}):", "", *md_block(c.message), ""]
    if v.causes:
        out += ["## Problems that cost tests in several exercises", ""]
        for cause in v.causes:
            out += _md_cause(cause, v)
    for e in v.exercises:
        out += [f"## {e.title} (`{e.id}`): {e.score}", ""]
        for cause in e.causes:
            out += _md_cause(cause, v)
        for t in e.tests:
            line = f": {md_inline(t.on_its_line)}" if t.on_its_line else ""
            out.append(f"- {t.mark.symbol} {t.name} ({t.score}){line}")
            if t.below:
                out += ["", *md_block(t.below), ""]
        out.append("")
    return "\n".join(out)


def _md_cause(c: CauseView, v: SubmissionView) -> list[str]:
    out = [f"**{cause_heading(c, v)}:**", "", *md_block(c.text), ""]
    tests = cause_tests(c, v)
    if tests:
        out += [f"- {t}" for t in tests] + [""]
    return out
