"""gradebook.csv: one row per submission, one column per exercise (what a TA uploads to the LMS)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder.report.attention import Attention, review_text
from autograder.report.csvfile import write_csv
from autograder.report.text import pts as _pts
from autograder.results import SubmissionResult

GRADEBOOK_COLUMNS = ("submission", "student", "name")  # then one column per exercise id, then TOTAL_COLUMNS
# flagged: "yes" when staff should review the submission (blank, duplicate, late, an ambiguous LMS name, tamper
# evidence, a grader error);
# review: the reasons, each with its cell and line
TOTAL_COLUMNS = ("total", "max_total", "status", "flagged", "review")


def write_gradebook(results: Iterable[SubmissionResult], path: Path, exercise_ids: list[str],
                    names: dict[str, str] | None = None,
                    attention: dict[str, list[Attention]] | None = None) -> None:
    """One row per submission: ``submission, student, name, <exercise ids...>, total, max_total, status, flagged,
    review``. ``name`` is the person's name as the LMS gave it (for display; ``student`` is the unique id);
    ``attention``: per student, what :mod:`.attention` found (blank, duplicate, late)."""
    names = names or {}
    attention = attention or {}
    rows = []
    for r in results:
        pts = {e.id: e.points for e in r.exercises}
        student = r.student or r.submission
        review = review_text(attention.get(student, ()), r.review)
        rows.append([r.submission, student, names.get(student, ""), *(_pts(pts.get(i, 0.0)) for i in exercise_ids),
                     _pts(r.total), _pts(r.max_total), r.status, "yes" if review else "", review])
    write_csv(path, [*GRADEBOOK_COLUMNS, *exercise_ids, *TOTAL_COLUMNS], rows)
