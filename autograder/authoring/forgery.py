"""What validate knows about advice: facts only the student's process reports earn no points (issue 43).

A hidden test marked ``in_process`` is advice: worth 0 points, because student code can forge whatever the
sandbox says about how a value was computed. Two consequences for validate:

- a mutant whose mistake only such a fact shows (a gradient derived by hand, a retained non-leaf) cannot lose
  points; it is *advised*, not survived, when an advice test fails with the mutant's own misconception key
  (:func:`advised`);
- each exercise with advice gets forgery cases (``forgeries/NAME.py`` beside the mutants): the honest mistake
  with that advice's evidence forged, declared with ``# twin: MUTANT`` (the honest mistake, a mutant of the
  same exercise). The forgery must earn no more than its twin (:func:`judge_forgery`).
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.assignment import Assignment
from autograder.authoring.cases import SEP, Case, compose
from autograder.authoring.lint import declared_misconceptions
from autograder.results import SubmissionResult

FORGERY = "forgery"  # their Case.kind
_TWIN = re.compile(r"^#\s*twin:\s*([\w.-]+)\s*$", re.M)


def advice_failures(r: SubmissionResult, exercise: str) -> list[tuple[str, str]]:
    """(test name, misconception) of every failed 0-point test of ``exercise``: advice that spoke."""
    return [(t.name, t.misconception) for e in r.exercises if e.id == exercise for t in e.tests
            if t.max_points == 0 and t.status == "failed"]


def advised(source: Path, r: SubmissionResult, exercise: str) -> str | None:
    """Why a mutant that earned full marks is advised rather than survived; None when it simply survived.

    Advised: an advice test failed with one of the mutant's declared misconception keys, so the student is told,
    and no point can rest on the fact (the judge cannot verify it)."""
    keys = set(declared_misconceptions(source) or [])
    said = [(name, key) for name, key in advice_failures(r, exercise) if key and key in keys]
    if not said:
        return None
    return "advised, 0 points by design (a fact only the student's process reports): " + "; ".join(
        f"{name} says `{key}`" for name, key in said)


def forgery_cases(assignment: Assignment, exercises: list[str] | None, workdir: Path) -> list[Case]:
    """One case per forgery file of the chosen exercises, composed as an alternative is (appended to the
    reference, a later cell redefining an earlier one)."""
    chosen = [assignment.exercise(e) for e in exercises] if exercises else assignment.exercises
    out = []
    for ex in chosen:
        for src in ex.forgeries():
            c = Case(f"{FORGERY}{SEP}{ex.id}{SEP}{src.stem}", FORGERY, ex.id, src, workdir / f"{FORGERY}{SEP}{ex.id}"
                     f"{SEP}{src.stem}.py")
            compose(assignment, {ex.id: src}, c.path)
            out.append(c)
    return out


def twin_of(source: Path) -> str | None:
    """The mutant a forgery declares as its honest twin (``# twin: NAME``)."""
    m = _TWIN.search(source.read_text())
    return m.group(1).removesuffix(".py") if m else None


def judge_forgery(case: Case, forged: SubmissionResult, results: dict[str, SubmissionResult]) -> tuple[str, bool, str]:
    """(label, ok, detail): the forgery earns no more than its honest twin (a mutant graded beside it)."""
    label = f"{FORGERY} {case.source.stem}"
    twin = twin_of(case.source)
    honest = results.get(f"mutant{SEP}{case.exercise}{SEP}{twin}") if twin else None
    if honest is None:
        return label, False, (f"declares no twin, or one that is not a mutant of {case.exercise} graded here "
                              f"({twin!r}): write `# twin: MUTANT` naming the honest mistake it forges")

    def pts(r: SubmissionResult) -> float:
        return next((e.points for e in r.exercises if e.id == case.exercise), 0.0)

    got, base = pts(forged), pts(honest)
    if got > base + 1e-9:
        bought = sorted({t.name for e in forged.exercises if e.id == case.exercise for t in e.tests
                         if t.status == "passed" and t.max_points > 0}
                        - {t.name for e in honest.exercises if e.id == case.exercise for t in e.tests
                           if t.status == "passed"})
        return label, False, (f"FORGED: earned {got:g} against its honest twin {twin}'s {base:g}; the forged "
                              f"evidence bought: {', '.join(bought) or '?'}. Rest those points on values or on a "
                              "measurement outside the sandbox, or make the test advice (in_process, 0 points)")
    return label, True, f"{got:g} <= its honest twin {twin}'s {base:g}" + (", flagged for review"
                                                                          if forged.flagged else "")
