"""Judge-side caps on every string a student's code can influence.

The sandbox caps its own messages too, but the sandbox is the student's: a
submission can rewrite it, or write forged replies straight onto its socket.
So the judge cuts every student-derived string (test messages, cell errors,
captured output, exception text) to a few KiB, with a visible marker, before
it reaches results, the database, feedback pages or CSV files.
"""

from __future__ import annotations

from typing import Any

from autograder.results import SubmissionResult

MARKER = "[truncated]"
MESSAGE_CHARS = 4096  # one test's feedback, one cell's error, one submission-level error
DETAIL_CHARS = 4096  # the staff-only traceback of one test
OUTPUT_CHARS = 8192  # what the student's code printed, head and tail
FIELD_CHARS = 1024  # short fields: an exception's type name, a protection's description
CELLS_CHARS = 64 * 1024  # all cell messages of one submission together


def cap(text: Any, limit: int = MESSAGE_CHARS) -> str:
    """``text`` (made a str) cut to about ``limit`` characters, the cut marked ``[truncated]``."""
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # noqa: BLE001 - a value whose str() fails is shown as such
            return "<not printable>"
    if len(text) <= limit:
        return text
    note = f" ... {MARKER} ({len(text) - limit} more characters)"
    return text[: max(0, limit - len(note))] + note


def cap_middle(text: str, limit: int = OUTPUT_CHARS) -> str:
    """Keep the head and the tail (where the last error usually is), mark the cut in between."""
    if len(text) <= limit:
        return text
    note = f"\n... {MARKER} ({len(text) - limit} characters left out) ...\n"
    head = (limit - len(note)) // 3
    tail = limit - len(note) - head
    return text[:head] + note + text[len(text) - tail :]


def cap_error(err: Any) -> dict[str, Any]:
    """A sandbox's description of an exception, each field capped and checked for shape."""
    if not isinstance(err, dict):
        return {"kind": "exception", "type": "Exception", "message": cap(err), "frames": []}
    frames = []
    raw = err.get("frames")
    for fr in raw[-8:] if isinstance(raw, list) else []:
        if isinstance(fr, list | tuple) and len(fr) == 4:
            cell, line, name, code = fr
            frames.append([cell, line, cap(name, 200), cap(code, 300)])
    return {
        "kind": cap(err.get("kind", "exception"), 64),
        "type": cap(err.get("type", "Exception"), 200),
        "message": cap(err.get("message", "")),
        "frames": frames,
    }


def cap_result(result: SubmissionResult) -> SubmissionResult:
    """Cap every student-derived string of a result, in place; returns it."""
    result.error = cap(result.error)
    result.output = cap_middle(result.output)
    result.protections = {cap(k, 64): cap(v, FIELD_CHARS) for k, v in list(result.protections.items())[:32]}
    budget = CELLS_CHARS
    for c in result.cells:
        c.message = cap(c.message, max(len(MARKER) + 40, min(MESSAGE_CHARS, budget)))
        c.label = cap(c.label, 200)
        budget -= len(c.message)
    for e in result.exercises:
        for t in e.tests:
            t.message = cap(t.message)
            t.cause = t.cause if t.cause in t.message else ""  # a cause is part of the message, or none
            t.detail = cap_middle(t.detail, DETAIL_CHARS)
    return result
