"""The results model: one object per submission feeds every output.

The console report, gradebook.csv, Gradescope's results.json, the database
and the feedback pages are all views of a :class:`SubmissionResult`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

# "grader_error": the grader's own code failed on this test (never the student's mistake);
# the test's points are withheld from the maximum (``TestResult.withheld``) until staff fix it.
TestStatus = Literal["passed", "failed", "error", "timeout", "skipped", "grader_error"]
ExerciseStatus = Literal["passed", "failed", "timeout"]
CellStatus = Literal["ok", "error", "timeout", "crashed"]
SubmissionStatus = Literal["graded", "load_error", "internal_error"]
STATUSES: tuple[TestStatus, ...] = get_args(TestStatus)


@dataclass
class CellResult:
    index: int
    status: CellStatus
    message: str = ""
    seconds: float = 0.0
    label: str = ""  # how the student finds it: "cell 4 (`def f(x):`)" or "the code at line 12"


@dataclass
class TestResult:
    nodeid: str
    name: str  # what students see: the test's docstring line
    exercise: str
    max_points: float
    points: float = 0.0
    status: TestStatus = "skipped"
    message: str = ""  # student-facing feedback; never hidden test code
    seconds: float = 0.0
    detail: str = ""  # staff-only: the judge-side traceback; never shown to students
    misconception: str = ""  # key of the misconception the feedback names ("" when none)
    withheld: float = 0.0  # points taken out of max_points by a grader error (staff must review)
    # the part of ``message`` that other tests share ("" when none is known): a cell that did not run, say.
    # Feedback says it once, with the tests it cost (report/view.py)
    cause: str = ""
    # staff-only: why this test's advice (a fact only the student's process reports) contradicts the values the
    # judge verified; the submission is flagged for review with it, and no point moves (issue 43)
    review: str = ""


@dataclass
class Flag:
    """One reason a submission is flagged for a TA's review (tamper evidence); points are unaffected."""

    cell: int
    line: int
    where: str  # how staff find it: "cell 4 (`def f(x):`), line 2"
    reason: str


@dataclass
class ExerciseResult:
    id: str
    title: str
    max_points: float
    tests: list[TestResult] = field(default_factory=list)

    @property
    def points(self) -> float:
        return round(sum(t.points for t in self.tests), 6)

    @property
    def status(self) -> ExerciseStatus:
        if all(t.status == "passed" for t in self.tests):
            return "passed"
        if any(t.status == "timeout" for t in self.tests):
            return "timeout"
        return "failed"


@dataclass
class SubmissionResult:
    submission: str  # file stem
    path: str
    assignment: str
    exercises: list[ExerciseResult] = field(default_factory=list)
    cells: list[CellResult] = field(default_factory=list)
    error: str = ""  # a submission-level problem (unreadable notebook, ...)
    status: SubmissionStatus = "graded"
    protections: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    sha256: str = ""
    student: str = ""
    output: str = ""  # what the student's code printed (capped)
    flags: list[Flag] = field(default_factory=list)  # tamper evidence found by the judge's static scan

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    @property
    def grader_errors(self) -> list[TestResult]:
        """Tests the grader itself failed on: flagged for staff, costing the student nothing."""
        return [t for e in self.exercises for t in e.tests if t.status == "grader_error"]

    @property
    def review(self) -> str:
        """The gradebook's one-line summary of why staff should look at this submission ("" when none)."""
        parts = []
        if self.flags:
            parts.append("flagged: " + "; ".join(f"{f.where}: {f.reason}" for f in self.flags[:5]))
            if len(self.flags) > 5:
                parts[-1] += f"; and {len(self.flags) - 5} more"
        if self.grader_errors:
            parts.append(f"grader error in {len(self.grader_errors)} test(s), points withheld")
        return " | ".join(parts)

    @property
    def total(self) -> float:
        return round(sum(e.points for e in self.exercises), 6)

    @property
    def max_total(self) -> float:
        return round(sum(e.max_points for e in self.exercises), 6)

    def exercise(self, exercise_id: str) -> ExerciseResult:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise KeyError(exercise_id)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["total"], d["max_total"] = self.total, self.max_total
        for e, ed in zip(self.exercises, d["exercises"], strict=True):
            ed["points"] = e.points
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SubmissionResult:
        d = dict(d)
        d.pop("total", None)
        d.pop("max_total", None)
        exercises = []
        for ed in d.pop("exercises", []):
            ed = dict(ed)
            ed.pop("points", None)
            tests = [TestResult(**t) for t in ed.pop("tests", [])]
            exercises.append(ExerciseResult(tests=tests, **ed))
        cells = [CellResult(**c) for c in d.pop("cells", [])]
        flags = [Flag(**f) for f in d.pop("flags", [])]
        return cls(exercises=exercises, cells=cells, flags=flags, **d)
