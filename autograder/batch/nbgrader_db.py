"""Write a batch's scores into an nbgrader ``gradebook.db``, through nbgrader's own API.

Courses already on nbgrader keep their formgrader, exports and LMS
integration: each exercise is a grade cell (named by the exercise id) of one
notebook of the assignment, and its points are the cell's ``auto_score``.
Missing assignment, notebook, grade cells, students and submissions are
created; existing ones are updated in place, and manual scores a grader
entered are left alone (nbgrader lets a manual score override ours).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.assignment import Assignment
from autograder.errors import StaffError
from autograder.results import SubmissionResult


class NbgraderError(StaffError):
    """nbgrader's gradebook cannot take the scores (the message says which record and why)."""


@dataclass
class Written:
    students: int
    grades: int


def write_scores(db: Path, assignment: Assignment, results: Sequence[tuple[SubmissionResult, float]], *,
                 nb_assignment: str, notebook: str) -> Written:
    """``results``: (result, submission time as a Unix timestamp), one per student."""
    try:
        from nbgrader.api import Grade as NbGrade
        from nbgrader.api import Gradebook, GradeCell, MissingEntry, SubmittedNotebook
    except ImportError:
        raise NbgraderError("--nbgrader-db needs nbgrader (pip install nbgrader)") from None
    db = Path(db)
    if not db.exists():
        raise NbgraderError(f"{db}: no such nbgrader gradebook (run nbgrader in the course first, "
                            "or point at the course's gradebook.db)")
    grades = 0
    with Gradebook(f"sqlite:///{db.resolve()}") as gb:
        gb.update_or_create_assignment(nb_assignment)
        try:
            gb.find_notebook(notebook, nb_assignment)
        except MissingEntry:
            gb.add_notebook(notebook, nb_assignment)
        cells: dict[str, object] = {}
        for ex in assignment.exercises:
            max_points = max((e.max_points for r, _ in results for e in r.exercises if e.id == ex.id),
                             default=ex.points)
            cells[ex.id] = gb.update_or_create_grade_cell(ex.id, notebook, nb_assignment, max_score=max_points,
                                                          cell_type="code")
        for r, when in results:
            student = r.student or r.submission
            gb.update_or_create_student(student)
            stamp = datetime.fromtimestamp(when, UTC).replace(tzinfo=None) if when else None
            try:
                sub = gb.find_submission(nb_assignment, student)
                if stamp is not None:
                    sub.timestamp = stamp
            except MissingEntry:
                sub = gb.add_submission(nb_assignment, student, **({"timestamp": stamp} if stamp else {}))
            try:
                snb = gb.find_submission_notebook(notebook, nb_assignment, student)
            except MissingEntry:  # the notebook was added to the assignment after this submission
                snb = SubmittedNotebook(notebook=gb.find_notebook(notebook, nb_assignment), assignment=sub)
                gb.db.add(snb)
                gb.db.flush()
            points = {e.id: e.points for e in r.exercises}
            for ex_id, cell in cells.items():
                assert isinstance(cell, GradeCell)
                try:
                    g = gb.find_grade(ex_id, notebook, nb_assignment, student)
                except MissingEntry:
                    g = NbGrade(cell_id=cell.id, notebook=snb)
                    gb.db.add(g)
                g.auto_score = float(points.get(ex_id, 0.0))
                g.needs_manual_grade = False
                grades += 1
            gb.db.commit()
    return Written(students=len(results), grades=grades)
