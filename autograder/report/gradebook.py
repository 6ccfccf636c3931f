"""gradebook.csv: one row per submission, one column per exercise (what a TA uploads to the LMS)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from autograder.report.files import atomic_open
from autograder.report.text import pts as _pts
from autograder.results import SubmissionResult

GRADEBOOK_COLUMNS = ("submission", "student")  # then one column per exercise id, then TOTAL_COLUMNS
# flagged: "yes" when staff should review the submission (tamper evidence or a grader error);
# review: the reasons, each with its cell and line
TOTAL_COLUMNS = ("total", "max_total", "status", "flagged", "review")


def write_gradebook(results: Iterable[SubmissionResult], path: Path, exercise_ids: list[str]) -> None:
    """One row per submission: ``submission, student, <exercise ids...>, total, max_total, status, flagged, review``."""
    with atomic_open(path, newline="") as f:
        w = csv.writer(f)
        w.writerow([*GRADEBOOK_COLUMNS, *exercise_ids, *TOTAL_COLUMNS])
        for r in results:
            pts = {e.id: e.points for e in r.exercises}
            w.writerow([r.submission, r.student or r.submission, *(_pts(pts.get(i, 0.0)) for i in exercise_ids),
                        _pts(r.total), _pts(r.max_total), r.status, "yes" if r.review else "", r.review])
