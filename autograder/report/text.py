"""How numbers and messages are written in every report (one way, so the CSV, the console and the pages agree)."""

from __future__ import annotations


def pts(x: float) -> str:
    """Points as people write them: 2, 0.5, 1.25 (no trailing zeros)."""
    return f"{x:g}"


def first_line(s: str, limit: int | None = None) -> str:
    """The first non-blank line of ``s``, stripped, cut to ``limit`` characters (marked "...")."""
    line = next((ln.strip() for ln in (s or "").splitlines() if ln.strip()), "")
    return line if limit is None or len(line) <= limit else line[: limit - 3] + "..."
