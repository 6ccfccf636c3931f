"""How numbers and messages are written in every report (one way, so the CSV, the console and the pages agree)."""

from __future__ import annotations

import re

from autograder.printable import printable


def pts(x: float) -> str:
    """Points as people write them: 2, 0.5, 1.25 (no trailing zeros)."""
    return f"{x:g}"


def first_line(s: str, limit: int | None = None) -> str:
    """The first non-blank line of ``s``, stripped, cut to ``limit`` characters (marked "...")."""
    line = next((ln.strip() for ln in (s or "").splitlines() if ln.strip()), "")
    return line if limit is None or len(line) <= limit else line[: limit - 3] + "..."


# CommonMark lets a backslash escape any ASCII punctuation. Escaped: what starts a link or an image (`[`, `]`,
# `!`, `(`, `)`), raw HTML, an autolink or an entity (`<`, `>`, `&`), code, emphasis, strike-through, tables and
# math (`` ` ``, `*`, `~`, `|`, `$`), headings and lists (`#`, `+`), braces, and the backslash itself; `_`
# where it can emphasise (not inside a word: ``bob_smith_777`` stays readable); a leading `-` or `=`.
_MD_SPECIAL = re.compile(r"([\\`*{}\[\]<>()#+!|~&$]|(?<!\w)_|_(?!\w)|^[-=])")
_BACKTICKS = re.compile(r"`+")


def md_inline(s: object) -> str:
    """Student- or LMS-derived text inside a Markdown line (a title, a list item): shown, never rendered.

    Control characters are escaped first (:func:`autograder.printable.printable`), then every character
    Markdown could act on is backslash-escaped, so ``![](http://...)`` stays text, not a live image.
    """
    return _MD_SPECIAL.sub(r"\\\1", printable(s))


def md_block(s: object) -> list[str]:
    """Student-derived text as a fenced block (its lines verbatim, never rendered as Markdown or HTML).

    The fence is longer than any run of backticks inside, so nothing in the text can close it early.
    """
    text = printable(s, lines=True)
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", text, fence]

def block_lines(s: object, limit: int = 12) -> list[str]:
    """A multi-line message as console lines, each shown safely (:func:`printable`), at most ``limit`` of them.

    Split after escaping, so a bare ``\\r`` shows as ``\\r`` rather than ending a line.
    """
    return printable(s, lines=True).strip("\n").split("\n")[:limit]


def sentences(s: str, limit: int = 400) -> str:
    """``s`` on one line, as whole sentences up to ``limit`` characters: a console line never stops mid-sentence.

    At least the first sentence is kept; one longer than ``limit`` is cut at a word and marked "...".
    """
    text = " ".join((s or "").split())
    if len(text) <= limit:
        return text
    kept = ""
    for m in _SENTENCE_END.finditer(text):
        if m.end() > limit:
            break
        kept = text[: m.end()].rstrip()
    if kept:
        return kept
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return cut + "..."


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 worker``, ``2 workers``."""
    return f"{n} {word if n == 1 else many or word + 's'}"
