"""One view-model per result: what every view of a SubmissionResult shows, decided once.

feedback.md, feedback.html (and the submission service's pages, which show its body), the
``grade`` console, students' ``check`` and staff's ``try`` only *render* a :class:`SubmissionView`:
which cells to name and how, which tests failed and with what mark, and which causes several
tests share. A format chooses its markup and its escaping, never its content, so the formats
cannot drift apart (a grader error once read ⚠️ in Markdown and ✗ in HTML).

A shared cause is said once. A syntax error in one cell, a stub still raising
NotImplementedError, a missing function: each fails every test that needs it with the same
sentence. Tests that fail with the same sentence (the judge's ``TestResult.cause`` where it
names one, else the message itself) form one :class:`CauseView`, said at the top of its exercise
(or before the exercises, when it spans several) with the tests it cost; each test then refers
to it by number and says only what is its own.

Strings here are still raw (student-derived): every renderer escapes them its own way.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from autograder.report.text import pts
from autograder.results import CellResult, SubmissionResult, TestResult

if TYPE_CHECKING:
    from autograder.report.attention import Attention


@dataclass(frozen=True)
class Mark:
    """How one test status is shown: the one symbol and word set of every format."""

    word: str  # console formats (grade, check, try): [FAIL]
    symbol: str  # Markdown and HTML
    css: str  # HTML class (colour)


MARKS: dict[str, Mark] = {
    "passed": Mark("PASS", "✅", "pass"),
    "failed": Mark("FAIL", "❌", "fail"),
    "error": Mark("ERROR", "❌", "fail"),
    "timeout": Mark("TIMEOUT", "⏱️", "fail"),
    "skipped": Mark("SKIP", "➖", "muted"),
    "grader_error": Mark("GRADER ERROR", "⚠️", "warn"),
}


def mark(status: str) -> Mark:
    return MARKS.get(status, Mark(status.upper(), "❌", "fail"))


def score_text(points: float | None, max_points: float | None = None) -> str:
    """The one way a total is shown, on every page and in every export's words: ``34.88 / 110`` (no trailing
    zeros, at most two decimals); "" for no score."""
    if points is None:
        return ""
    got = pts(round(points, 2))
    return got if max_points is None else f"{got} / {pts(round(max_points, 2))}"


def time_text(when: float | dt.datetime, tz: str | None = None) -> str:
    """The one way a time is shown: ``2026-12-06 22:45 CET``, in the assignment's time zone ``tz`` (a
    datetime without ``tz`` keeps its own zone), its name always said."""
    zone = ZoneInfo(tz) if tz else None
    if isinstance(when, dt.datetime):
        d = when.astimezone(zone) if zone else when
    else:
        d = dt.datetime.fromtimestamp(when, zone or ZoneInfo("UTC"))
    return d.strftime("%Y-%m-%d %H:%M %Z")


FLAGGED = ("Your code touches the grader or the interpreter's internals in the places below, so a member of "
           "staff will look at it. Your points are as measured.")

# Statuses whose message can be a cause shared with other tests (a skip or a grader error is no cost of the student's).
_CAUSED = ("failed", "error", "timeout")


def cell_where(c: CellResult) -> str:
    """How a student finds a cell: its label ("cell 4 (`def f(x):`)", "the code at line 12"), else its number."""
    return c.label or f"cell {c.index}"


@dataclass(frozen=True)
class CellView:
    """A cell that did not run cleanly."""

    where: str
    status: str
    message: str

    @property
    def first_line(self) -> str:
        lines = self.message.strip().splitlines()
        return lines[0] if lines else ""


@dataclass(frozen=True)
class TestView:
    name: str
    status: str
    points: float
    max_points: float
    message: str  # what is this test's own to say ("" when its cause says it all)
    cause: int = 0  # the number of the CauseView that explains it (0: none)
    misconception: str = ""
    detail: str = ""  # staff-only (``try`` shows it for a grader error); never in a student's format

    @property
    def mark(self) -> Mark:
        return mark(self.status)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def score(self) -> str:
        return f"{pts(self.points)}/{pts(self.max_points)}"

    @property
    def brief(self) -> bool:
        """Its own words fit on its line, before the reference to its cause ("`f` is not defined")."""
        return bool(self.cause) and "\n" not in self.message and len(self.message) <= 80

    @property
    def on_its_line(self) -> str:
        """What follows the test's name and points on its line: "`f` is not defined: see problem 1 above"."""
        if not self.cause:
            return ""
        return f"{self.message}: {refers(self)}" if self.brief and self.message else refers(self)

    @property
    def below(self) -> str:
        """What is shown under the test's line, as a block ("" when nothing)."""
        return "" if self.passed or self.brief else self.message


@dataclass(frozen=True)
class Cost:
    """One test a cause cost."""

    exercise: str
    name: str
    lost: float


@dataclass
class CauseView:
    """One sentence that explains several failed tests, said once."""

    number: int
    text: str
    exercise: str  # the exercise it is said at the top of; "" when it spans several (said before them)
    costs: list[Cost] = field(default_factory=list)

    @property
    def lost(self) -> float:
        return round(sum(c.lost for c in self.costs), 6)

    def by_exercise(self) -> dict[str, list[Cost]]:
        out: dict[str, list[Cost]] = {}
        for c in self.costs:
            out.setdefault(c.exercise, []).append(c)
        return out


def _tests(n: int) -> str:
    return f"{n} test" if n == 1 else f"{n} tests"


def _points(x: float) -> str:
    """``1 point``, ``2.5 points``."""
    return f"{pts(x)} point" if x == 1 else f"{pts(x)} points"


def cause_heading(c: CauseView, v: SubmissionView, *, points: bool = True) -> str:
    """"Problem 1 cost all 13 tests of this exercise (10 points)": what a cause cost, in words (plain text)."""
    n = len(c.costs)
    whole = bool(c.exercise) and v.exercise_tests().get(c.exercise) == n
    tests = f"all {n} tests of this exercise" if whole else _tests(n)
    if not c.exercise and n == len(v.tests):
        tests = f"all {n} tests"
    return f"Problem {c.number} cost {tests}" + (f" ({_points(c.lost)})" if points else "")


def cause_tests(c: CauseView, v: SubmissionView, *, points: bool = True) -> list[str]:
    """The tests a cause cost, one entry per exercise (or per test within its own exercise), plain text.

    Empty for a cause said at the top of the exercise whose every test it cost: the heading says so.
    """
    counts = v.exercise_tests()
    if not c.exercise and len(c.costs) == len(v.tests):
        return []  # the heading says it cost every test
    if c.exercise:
        if counts.get(c.exercise) == len(c.costs):
            return []
        return [f"{t.name}" + (f" ({_points(t.lost)})" if points else "") for t in c.costs]
    out = []
    for ex, costs in c.by_exercise().items():
        lost = f" ({_points(round(sum(t.lost for t in costs), 6))})" if points else ""
        if counts.get(ex) == len(costs):
            out.append(f"{ex}: all {_tests(len(costs))}{lost}")
        else:
            out.append(f"{ex}: " + "; ".join(t.name for t in costs) + lost)
    return out


def refers(t: TestView) -> str:
    """What a test says of its cause: "see problem 2 above" ("" when none)."""
    return f"see problem {t.cause} above" if t.cause else ""


@dataclass
class ExerciseView:
    id: str
    title: str
    points: float
    max_points: float
    tests: list[TestView] = field(default_factory=list)
    causes: list[CauseView] = field(default_factory=list)  # said at its top

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.tests)

    @property
    def score(self) -> str:
        return score_text(self.points, self.max_points)


@dataclass(frozen=True)
class AttentionView:
    kind: str
    text: str  # the student's words (never another student's name)


@dataclass(frozen=True)
class FlagView:
    where: str
    reason: str


@dataclass
class SubmissionView:
    who: str  # the student, else the submission's name
    submission: str
    status: str
    total: float
    max_total: float
    seconds: float
    error: str
    review: str
    attention: list[AttentionView]
    flags: list[FlagView]
    cells: list[CellView]
    causes: list[CauseView]  # spanning several exercises: said before them
    exercises: list[ExerciseView]

    @property
    def score(self) -> str:
        return score_text(self.total, self.max_total)

    @property
    def tests(self) -> list[TestView]:
        return [t for e in self.exercises for t in e.tests]

    @property
    def all_causes(self) -> list[CauseView]:
        return [*self.causes, *(c for e in self.exercises for c in e.causes)]

    def counts(self) -> dict[str, int]:
        """Tests per status: every format shows these, so every format agrees on them."""
        out: dict[str, int] = {}
        for t in self.tests:
            out[t.status] = out.get(t.status, 0) + 1
        return out

    def exercise_tests(self) -> dict[str, int]:
        return {e.id: len(e.tests) for e in self.exercises}


def _sentence_start(m: str, at: int) -> bool:
    return at == 0 or m[at - 1] == "\n" or (m[at - 1] == " " and m[at - 2 : at - 1] in (".", "!", "?", ":"))


def _shared_ending(messages: list[str]) -> str:
    """The whole sentences every one of ``messages`` ends with ("" when none): a misconception's explanation."""
    ending = os.path.commonprefix([m[::-1] for m in messages])[::-1]
    for k in range(len(ending)):
        if ending[k] != " " and all(_sentence_start(m, len(m) - len(ending) + k) for m in messages):
            return ending[k:].strip() if len(ending) - k >= 20 else ""
    return ""


def _causes(r: SubmissionResult) -> dict[int, str]:
    """Each failed test's cause (by ``id``): what it may share with other tests, contained in its message.

    The judge's ``cause`` where it names one (a cell that did not run); else, for tests of one exercise
    whose failures fit the same misconception, the sentences their messages end with alike; else the message.
    """
    out: dict[int, str] = {}
    for e in r.exercises:
        failed = [t for t in e.tests if t.status in _CAUSED and t.message.strip()]
        by_key: dict[str, list[TestResult]] = {}
        for t in failed:
            if t.misconception and not (t.cause and t.cause in t.message):
                by_key.setdefault(t.misconception, []).append(t)
        for same in by_key.values():
            ending = _shared_ending([t.message.strip() for t in same]) if len(same) > 1 else ""
            for t in same if ending else ():
                out[id(t)] = ending
        for t in failed:
            if id(t) not in out:
                out[id(t)] = t.cause.strip() if t.cause and t.cause in t.message else t.message.strip()
    return out


def _own(t: TestResult, cause: str) -> str:
    """What is left of a test's message once its shared cause is said elsewhere ("" when the cause is all of it)."""
    message = t.message.strip()
    if message == cause:
        return ""
    return message.replace(cause, "").strip().rstrip(":;,").strip()


def view(r: SubmissionResult, attention: Sequence[Attention] = ()) -> SubmissionView:
    """The view-model of ``r``: what every format shows, shared causes found once."""
    cause_of = _causes(r)
    members: dict[str, list[tuple[str, TestResult]]] = {}
    for e in r.exercises:
        for t in e.tests:
            if key := cause_of.get(id(t), ""):
                members.setdefault(key, []).append((e.id, t))
    shared = {k: v for k, v in members.items() if len(v) >= 2}
    spanning = [k for k, v in shared.items() if len({ex for ex, _ in v}) > 1]
    causes: dict[str, CauseView] = {}

    def new_cause(key: str, exercise: str) -> CauseView:
        c = CauseView(len(causes) + 1, key, exercise,
                      [Cost(ex, t.name, round(t.max_points - t.points, 6)) for ex, t in shared[key]])
        causes[key] = c
        return c

    top = [new_cause(k, "") for k in spanning]
    exercises = []
    for e in r.exercises:
        said = [new_cause(k, e.id) for k in dict.fromkeys(cause_of.get(id(t), "") for t in e.tests)
                if k in shared and k not in causes]
        tests = []
        for t in e.tests:
            key = cause_of.get(id(t), "")
            cause = causes[key].number if key in causes else 0
            tests.append(TestView(t.name, t.status, t.points, t.max_points,
                                  _own(t, key) if cause else ("" if t.status == "passed" else t.message),
                                  cause, t.misconception, t.detail))
        exercises.append(ExerciseView(e.id, e.title, e.points, e.max_points, tests, said))
    # a submission that could not be read fails every test with its error: said once, as the cause
    error = "" if r.error.strip() and any(r.error.strip() in c.text for c in top) else r.error
    return SubmissionView(
        who=r.student or r.submission, submission=r.submission, status=r.status, total=r.total,
        max_total=r.max_total, seconds=r.seconds, error=error, review=r.review,
        attention=[AttentionView(a.kind, a.student) for a in attention],
        flags=[FlagView(f.where, f.reason) for f in r.flags],
        cells=[CellView(cell_where(c), c.status, c.message) for c in r.cells if c.status != "ok"],
        causes=top, exercises=exercises,
    )
