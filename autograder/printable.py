"""Student- and LMS-controlled text made safe to show: the one escaper for terminals, logs and text files.

A file name inside a student's zip, an exception message, a Moodle full name:
any of them can carry ESC (``\\x1b[2J`` clears a TA's screen, ``\\x1b]8;;`` makes
a live link), a C1 CSI (``\\x9b``), a bare CR that overwrites the line a TA is
reading, or a bidirectional override that shows a name backwards. And a lone
surrogate (``"\\ud800"``) cannot be encoded as UTF-8 at all, so a file holding
it is never written. :func:`printable` shows each such character as its Python
escape (``\\x1b``, ``\\r``, ``\\u202e``, ``\\ud800``), so the text stays readable
and cannot act. Every place that shows such a string (console lines, titles,
flags, CSV cells, feedback files) goes through it.

It imports nothing of the grader's, so every layer may use it.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls and DEL, C1 controls, lone surrogates, the bidirectional controls (embeddings, overrides,
# isolates, marks), and the line and paragraph separators (which end a line in some viewers).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_ALWAYS = f"\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}\u2028\u2029"
_ONE_LINE = re.compile(f"[\t\n{_ALWAYS}]")
_MULTI_LINE = re.compile(f"[{_ALWAYS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: Any, *, lines: bool = False) -> str:
    """``text`` with every control character shown as its escape, never acted on.

    ``lines=True`` keeps newlines and tabs (a multi-line message shown as a
    block); otherwise they are escaped too, so the result is one line (a
    title, a progress line, a CSV cell). A bare ``\\r`` is always escaped,
    ``\\r\\n`` becomes ``\\n`` in a block. The result is always encodable as UTF-8.
    """
    s = text if isinstance(text, str) else str(text)
    if lines:
        s = s.replace("\r\n", "\n")
        return _MULTI_LINE.sub(_escape, s)
    return _ONE_LINE.sub(_escape, s)


def is_printable(text: str, *, lines: bool = False) -> bool:
    """True when :func:`printable` would leave ``text`` as it is."""
    return (_MULTI_LINE if lines else _ONE_LINE).search(text) is None
