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
from autograder.report.text import md_block, md_inline
from autograder.report.text import pts as _pts
from autograder.results import SubmissionResult

_MARK = {
    "passed": "PASS",
    "failed": "FAIL",
    "error": "ERROR",
    "timeout": "TIMEOUT",
    "skipped": "SKIP",
    "grader_error": "GRADER ERROR",
}


def console_report(r: SubmissionResult, *, verbose: bool = False) -> str:
    """The per-submission report printed by ``torchgrader grade``.

    Every student-derived string goes through :func:`printable`: a name or a
    message can never move the cursor, clear the screen or overwrite a line.
    """
    lines = [f"== {printable(r.submission)}: {_pts(r.total)} / {_pts(r.max_total)} points ({r.seconds:.1f} s)"]
    if r.error:
        lines.append(f"   {printable(r.error)}")
    if r.review:
        lines.append(f"   REVIEW: {printable(r.review)}")
    for c in r.cells:
        if c.status != "ok":
            first = c.message.splitlines()[0] if c.message else ""
            lines.append(f"   ! {printable(c.label or f'cell {c.index}')} {printable(c.status)}: {printable(first)}")
    for e in r.exercises:
        lines.append(f"   {e.id:<18} {_pts(e.points):>5} / {_pts(e.max_points):<5} {e.title}")
        for t in e.tests:
            if t.status == "passed" and not verbose:
                continue
            lines.append(f"      [{_MARK.get(t.status, t.status)}] {t.name} ({_pts(t.points)}/{_pts(t.max_points)})")
            if t.message and t.status != "passed":
                for m in t.message.splitlines()[:12]:
                    lines.append(f"         {printable(m)}")
    return "\n".join(lines)


def protections_report(protections: dict[str, str]) -> str:
    lines = ["Sandbox protections:"]
    for k, v in protections.items():
        warn = "  <-- WARNING" if v.startswith(("NOT", "per process only")) else ""
        lines.append(f"  {printable(k):<11} {printable(v)}{warn}")
    return "\n".join(lines)


def gradescope_results(r: SubmissionResult) -> dict:
    """Gradescope's results.json for one submission (visible feedback, no test code).

    Gradescope renders ``md`` outputs, so every message (it carries student
    values) is a fenced block there: shown as written, never as Markdown or HTML.
    """
    tests = []
    for e in r.exercises:
        for t in e.tests:
            tests.append({
                "name": f"{e.id}: {t.name}",
                "score": t.points,
                "max_score": t.max_points,
                "status": "passed" if t.status == "passed" else "failed",
                "output": "\n".join(md_block(t.message)) if t.message else "",
                "output_format": "md",
                "visibility": "visible",
                "tags": [e.id],
            })
    parts = [md_block(r.error)] if r.error else []
    parts += [[f"{md_inline(c.label or f'cell {c.index}')} {md_inline(c.status)}:", *md_block(c.message)]
              for c in r.cells if c.status != "ok"]
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
    write_atomic(d / "results.json", json.dumps(gradescope_results(r), indent=2))
    write_atomic(d / "feedback.md", feedback_markdown(r, attention))
    write_atomic(d / "feedback.html", feedback_html(r, attention))
    return d


def feedback_markdown(r: SubmissionResult, attention: Sequence[Attention] = ()) -> str:
    """What a student reads: per exercise and test, points and the teaching message; never test code.

    Student- and LMS-derived text (names, errors, messages, flags) is never
    rendered: inline it is escaped (:func:`md_inline`), blocks are fenced
    with a fence longer than any backtick run inside (:func:`md_block`).
    ``attention``: blank, duplicate, late (what staff will look at).
    """
    out = [f"# Feedback: {md_inline(r.student or r.submission)}", "",
           f"**Score: {_pts(r.total)} / {_pts(r.max_total)}**", ""]
    if r.error:
        out += [*md_block(r.error), ""]
    if attention:
        out += ["## About your submission", ""] + [f"- {md_inline(a.student)}" for a in attention] + [""]
    if r.flags:
        out += ["## Flagged for review", "",
                "Your code touches the grader or the interpreter's internals in the places below, so a "
                "member of staff will look at it. Your points are as measured.", ""]
        out += [f"- {md_inline(f.where)}: {md_inline(f.reason)}" for f in r.flags] + [""]
    bad = [c for c in r.cells if c.status != "ok"]
    if bad:
        out += ["## Cells that did not run cleanly", ""]
        for c in bad:
            out += [f"- {md_inline(c.label or f'cell {c.index}')} ({md_inline(c.status)}):", "",
                    *md_block(c.message), ""]
    for e in r.exercises:
        out += [f"## {e.title} (`{e.id}`): {_pts(e.points)} / {_pts(e.max_points)}", ""]
        for t in e.tests:
            mark = "✅" if t.status == "passed" else "⚠️" if t.status == "grader_error" else "❌"
            out.append(f"- {mark} {t.name} ({_pts(t.points)}/{_pts(t.max_points)})")
            if t.status != "passed" and t.message:
                out += ["", *md_block(t.message), ""]
        out.append("")
    return "\n".join(out)
