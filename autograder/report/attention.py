"""What a TA must look at beyond the points: blank submissions, byte-identical ones, late ones, ambiguous names.

These are facts about a submission among its class (a duplicate needs the
other file; a blank one needs the assignment's stub), so they are worked out
once the batch has every submission, and shown in the gradebook's ``review``
column, the class report and each student's feedback. A student is never
told another student's name: the feedback says "identical to another
submission"; the gradebook and the report (staff only) say whose.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

BLANK, DUPLICATE, LATE, AMBIGUOUS_NAME = "blank", "duplicate", "late", "ambiguous name"
KINDS = (BLANK, DUPLICATE, LATE, AMBIGUOUS_NAME)


@dataclass(frozen=True)
class Attention:
    """One reason a TA should look at a submission; points are unaffected."""

    kind: str  # one of KINDS
    staff: str  # what the gradebook and the class report say
    student: str  # what the student's feedback says (never another student's name)


@dataclass
class Submitted:
    """What the class-level checks need of one submission."""

    student: str
    sha256: str
    code: str | None  # the submission's code cells, joined (None when the file could not be read)
    late: str = ""  # how the LMS said it was late ("" when on time or not known)
    ambiguous: str = ""  # how its LMS name parses more than one way ("" when it parses one way)


# Lines the notebook adds around the stub (its check cells) and nbgrader's solution markers.
_SCAFFOLD = re.compile(r"^(from autograder import check|check\(\s*['\"][\w-]*['\"]\s*\))$")


def code_lines(code: str) -> list[str]:
    """The lines that carry code: stripped, with blank lines, comments and check cells left out."""
    out = []
    for ln in code.splitlines():
        s = _TRAILING_COMMENT.sub(_uncomment, ln).strip()
        if s and not s.startswith("#") and not _SCAFFOLD.match(s):
            out.append(s)
    return out


_TRAILING_COMMENT = re.compile(r"^(?P<code>[^#]*?)\s+#.*$")


def _uncomment(m: re.Match) -> str:
    """A line's trailing comment dropped, unless its ``#`` may be inside a string (an odd count of quotes)."""
    code = m["code"]
    return code if code.count("'") % 2 == 0 and code.count('"') % 2 == 0 else m.group()


def own_lines(code: str, stub: str) -> list[str]:
    """The lines of ``code`` that the stub does not have: what the student wrote."""
    given = set(code_lines(stub))
    return [ln for ln in code_lines(code) if ln not in given]


def is_blank(code: str, stub: str) -> bool:
    """An untouched stub: not one line of code beyond the stub's own (comments and check cells aside)."""
    return not own_lines(code, stub)


def class_attention(subs: Sequence[Submitted], stub: str) -> dict[str, list[Attention]]:
    """Per student id, what a TA must look at (students with nothing to look at are absent)."""
    out: dict[str, list[Attention]] = defaultdict(list)
    same: dict[str, list[str]] = defaultdict(list)
    for s in subs:
        same[s.sha256].append(s.student)  # two untouched stubs are the same file too: that is no copy
    given = set(code_lines(stub))
    blank_file: dict[str, bool] = {}  # once per file content
    for s in subs:
        if s.sha256 not in blank_file:
            blank_file[s.sha256] = s.code is not None and all(ln in given for ln in code_lines(s.code))
    blank = {s.student for s in subs if blank_file[s.sha256]}
    for s in subs:
        if s.student in blank:
            out[s.student].append(Attention(
                BLANK, "blank submission: the stub unchanged (no code beyond the given cells)",
                "Your submission is the unchanged stub: no code was found beyond the cells you were given. "
                "If you meant to submit your work, check that you saved the notebook and uploaded the right file."))
        others = sorted(o for o in same[s.sha256] if o != s.student)
        if others and s.student not in blank:
            out[s.student].append(Attention(
                DUPLICATE, f"identical to {_names(others)} (the same file, sha256 {s.sha256[:12]})",
                "Your file is byte-for-byte identical to another submission in this class: a member of staff "
                "will look at both."))
        if s.late:
            out[s.student].append(Attention(LATE, f"late ({s.late})", f"Submitted late ({s.late})."))
        if s.ambiguous:
            out[s.student].append(Attention(
                AMBIGUOUS_NAME, f"ambiguous LMS name: {s.ambiguous}; graded on its own, never merged with another "
                "student: check in the LMS whose it is",
                "The name the LMS gave your file can be read as more than one student's: it was graded on its own, "
                "and a member of staff will check whose it is."))
    return dict(out)


def _names(students: list[str], limit: int = 5) -> str:
    shown = ", ".join(students[:limit])
    return shown + (f" and {len(students) - limit} more" if len(students) > limit else "")


def review_text(attention: Iterable[Attention], review: str = "") -> str:
    """The gradebook's ``review`` cell: the class-level reasons first, then the result's own."""
    parts = [a.staff for a in attention]
    return " | ".join(parts + ([review] if review else []))
