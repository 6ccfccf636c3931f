"""The service's gradebook: the attempt that counts per student and assignment, in three CSV shapes.

- ``gradebook.csv``: the batch's columns (``report.gradebook``), one row per
  student and assignment, plus the attempt, its late days and penalty, staff's
  adjustment and its reasons, the late days of the student's bank it spent and
  the bank's balance;
- Canvas's gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``
  then one column per assignment, and a ``Points Possible`` row (Canvas: Grades >
  Import). Canvas reads an assignment column ``Title (NUMBER)`` as its assignment
  NUMBER, and any other name as a title (an existing assignment of exactly that
  title, else a new one): the column is ``Title (canvas_id)`` when the config
  gives the assignment's ``canvas_id``, else the title alone. ``ID`` is the roster
  id (Canvas matches it as its user id, then ``SIS Login ID``, here the email, then
  the name): use the roster that Canvas exported so the rows match;
- Moodle's grade import: ``Email address`` then one column per assignment
  (Moodle: Grades > Import > CSV file, "Map from: Email address", "Map to:
  email address", each grade column to its grade item).

Every file is written by ``report.csvfile.csv_text`` (no spreadsheet formulas).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autograder.report.csvfile import csv_text
from autograder.report.gradebook import GRADEBOOK_COLUMNS, TOTAL_COLUMNS
from autograder.report.text import pts
from autograder.results import SubmissionResult
from autograder.service.config import ServiceConfig
from autograder.service.ledger import adjusted
from autograder.service.policy import adjusted_total, course_standings
from autograder.service.store import Person, ServiceStore


@dataclass
class Row:
    person: Person
    assignment: str
    result: SubmissionResult | None  # the counting attempt's result (None: nothing graded)
    submission: str
    score: float | None  # after staff's adjustments and the late penalty
    late_days: int
    penalty: float
    adjustment: float = 0.0  # staff's change to the grader's total (before the penalty)
    adjustment_reason: str = ""  # their reasons, each with its exercise
    exercise_points: dict[str, float] | None = None  # per exercise after the adjustments (None: as graded)
    late_days_used: int = 0  # of the student's bank, spent on this attempt (no penalty for those days)
    late_days_left: int = 0  # the student's bank for the course, after every assignment's spending


def counting_rows(cfg: ServiceConfig, store: ServiceStore, titles: dict[str, str],
                  people: list[Person] | None = None) -> list[Row]:
    """One row per student (of ``people``; default: every student) and assignment: the attempt that counts
    (best or last, as the policy says), with the late days of the student's bank it spent and what the bank has
    left."""
    latest = {p.id: store.latest_results(p.id) for p in cfg.assignments}  # once for the class, not per student
    students = store.people("student") if people is None else people
    by_person = {person.id: course_standings(cfg, store, person.id, latest=latest) for person in students}
    rows = []
    for p in cfg.assignments:
        for person in students:
            sts, bank = by_person[person.id]
            st = next((s for s in sts[p.id] if s.counts), None)
            if st is None or st.result is None:
                rows.append(Row(person, p.id, None, "", None, 0, 0.0, late_days_left=bank.left))
                continue
            delta = round(adjusted_total(st.result, st.adjustments) - st.result.total, 6)
            why = "; ".join(f"{a.exercise}: {a.reason}" for a in st.adjustments)
            result = store.submission_result(st.result.id)  # parsed once, not on every render
            points = adjusted({e.id: (e.points, e.max_points) for e in result.exercises}, st.adjustments) \
                if st.adjustments else None
            rows.append(Row(person, p.id, result, st.submission.id, st.score, st.submission.late_days,
                            st.penalty_percent, delta, why, points, st.late_days_used, bank.left))
    return rows


def gradebook_csv(rows: list[Row], exercise_ids: dict[str, list[str]]) -> str:
    ids = [i for a in exercise_ids.values() for i in a]
    header = [*GRADEBOOK_COLUMNS, "assignment", *ids, *TOTAL_COLUMNS, "late_days", "penalty_percent", "raw_total",
              "adjustment", "adjustment_reason", "late_days_used", "late_days_left"]
    out = []
    for row in rows:
        r = row.result
        got = row.exercise_points or ({e.id: e.points for e in r.exercises} if r else {})
        cells = [pts(got[i]) if i in got else "" for i in ids]
        out.append([row.submission, row.person.id, row.person.name, row.assignment, *cells,
                    "" if row.score is None else pts(row.score), pts(r.max_total) if r else "",
                    r.status if r else "not submitted", "yes" if r and r.review else "", r.review if r else "",
                    row.late_days, pts(row.penalty), pts(r.total) if r else "",
                    pts(row.adjustment) if row.adjustment or row.adjustment_reason else "", row.adjustment_reason,
                    row.late_days_used, row.late_days_left])
    return csv_text(header, out)


def canvas_column(title: str, canvas_id: int = 0) -> str:
    """An assignment's column as Canvas's importer reads it: ``Title (NUMBER)`` names its assignment NUMBER."""
    return f"{title} ({canvas_id})" if canvas_id else title


def canvas_csv(rows: list[Row], titles: dict[str, str], max_points: dict[str, float],
               canvas_ids: dict[str, int] | None = None) -> str:
    order = list(titles)
    ids = canvas_ids or {}
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
              *(canvas_column(titles[a], ids.get(a, 0)) for a in order)]
    lines: list[list[Any]] = [["Points Possible", "", "", "", "", *(pts(max_points[a]) for a in order)]]
    by_person: dict[str, dict[str, Row]] = {}
    for r in rows:
        by_person.setdefault(r.person.id, {})[r.assignment] = r
    for pid, mine in by_person.items():
        person = next(iter(mine.values())).person
        lines.append([person.name, pid, "", person.email, "",
                      *("" if mine[a].score is None else pts(mine[a].score) for a in order)])  # type: ignore[arg-type]
    return csv_text(header, lines)


def moodle_csv(rows: list[Row], titles: dict[str, str]) -> str:
    order = list(titles)
    header = ["Email address", "ID number", "Full name", *(titles[a] for a in order)]
    by_person: dict[str, dict[str, Row]] = {}
    for r in rows:
        by_person.setdefault(r.person.id, {})[r.assignment] = r
    lines = []
    for pid, mine in by_person.items():
        person = next(iter(mine.values())).person
        lines.append([person.email, pid, person.name,
                      *("" if mine[a].score is None else pts(mine[a].score) for a in order)])  # type: ignore[arg-type]
    return csv_text(header, lines)
