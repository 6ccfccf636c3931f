"""Write a batch's scores into an nbgrader ``gradebook.db``, through nbgrader's own API.

Courses already on nbgrader keep their formgrader, exports and LMS
integration: each exercise is a grade cell (named by the exercise id) of one
notebook of the assignment, and its points are the cell's ``auto_score``.
The released notebook carries those grade cells from the start (see
``autograder.authoring.notebook``), so ``nbgrader generate_assignment
--force`` keeps working after grading. Missing assignment, notebook, grade
cells, students and submissions are created; existing ones are updated in
place, and manual scores a grader entered are left alone (nbgrader lets a
manual score override ours).

The formgrader counts a submission as autograded only when
``autograded/<student>/<assignment>/`` exists and the database's submission
time equals the one in ``submitted/.../timestamp.txt`` (or both are absent),
and it opens the notebook found there: for submissions in nbgrader's layout,
the submitted folder is copied to ``autograded/`` and the time is read with
nbgrader's own parser.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.assignment import Assignment
from autograder.errors import NbgraderError
from autograder.results import SubmissionResult


@dataclass
class Written:
    students: int
    grades: int


def write_scores(db: Path, assignment: Assignment, results: Sequence[tuple[SubmissionResult, float]], *,
                 nb_assignment: str, notebook: str, submitted: dict[str, Path] | None = None) -> Written:
    """``results``: (result, submission time as a Unix timestamp), one per student.

    ``submitted``: student -> the notebook in nbgrader's ``submitted/<student>/<assignment>/``, for
    the submissions that came from a course's own layout (their time is then nbgrader's).
    """
    with warnings.catch_warnings():
        # nbgrader's models use APIs SQLAlchemy 2 warns about; nothing a TA can act on
        warnings.filterwarnings("ignore", module=r"sqlalchemy(\.|$)")
        warnings.filterwarnings("ignore", module=r"nbgrader(\.|$)")
        try:
            from sqlalchemy.exc import SAWarning

            warnings.simplefilter("ignore", SAWarning)
        except ImportError:
            pass
        return _write_scores(db, assignment, results, nb_assignment=nb_assignment, notebook=notebook,
                             submitted=submitted or {})


def _nbgrader_time(folder: Path) -> datetime | None:
    """The submission time exactly as nbgrader's API reads it (naive UTC), or None without timestamp.txt."""
    from nbgrader.utils import parse_utc

    stamp = folder / "timestamp.txt"
    if not stamp.is_file():
        return None
    return parse_utc(stamp.read_text().strip())


def _copy_autograded(notebook_path: Path, student: str, nb_assignment: str) -> None:
    """``submitted/<student>/<assignment>/`` -> ``autograded/<student>/<assignment>/``, replaced whole."""
    folder = notebook_path.parent
    root = folder.parent.parent.parent  # the course: submitted/<student>/<assignment>/
    if folder.parent.parent.name != "submitted":
        return
    dest = root / "autograded" / student / nb_assignment
    tmp = dest.with_name(dest.name + ".torchgrader-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(folder, tmp, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)


def _write_scores(db: Path, assignment: Assignment, results: Sequence[tuple[SubmissionResult, float]], *,
                  nb_assignment: str, notebook: str, submitted: dict[str, Path]) -> Written:
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
            if student in submitted:  # nbgrader's own layout: its time, or none when it has none
                stamp = _nbgrader_time(submitted[student].parent)
            else:
                stamp = datetime.fromtimestamp(when, UTC).replace(tzinfo=None) if when else None
            try:
                sub = gb.find_submission(nb_assignment, student)
                if stamp is not None or student in submitted:
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
            if student in submitted:
                _copy_autograded(submitted[student], student, nb_assignment)
    return Written(students=len(results), grades=grades)
