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
from dataclasses import dataclass
from pathlib import Path

from autograder.authoring.lint import declared_misconceptions
from autograder.results import SubmissionResult

FORGERIES = "forgeries"  # the folder beside mutants/ that holds an exercise's forgery cases
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


@dataclass
class Forgery:
    """An honest mistake with an advice test's evidence forged, and the mutant it must not beat."""

    exercise: str
    source: Path
    twin: Path


def forgeries(exercise_dir: Path, exercise: str) -> list[Forgery]:
    """The forgery cases of one exercise (its ``forgeries/*.py``), each with its declared twin mutant."""
    folder = exercise_dir / FORGERIES
    out = []
    for src in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        m = _TWIN.search(src.read_text())
        twin = exercise_dir / "mutants" / f"{m.group(1).removesuffix('.py')}.py" if m else exercise_dir / "?"
        out.append(Forgery(exercise, src, twin))
    return out


def judge_forgery(f: Forgery, forged: SubmissionResult, honest: SubmissionResult) -> tuple[bool, str]:
    """(ok, detail): the forgery earns no more than its honest twin on its exercise."""
    def pts(r: SubmissionResult) -> float:
        return next((e.points for e in r.exercises if e.id == f.exercise), 0.0)

    got, twin = pts(forged), pts(honest)
    if got > twin + 1e-9:
        gained = [t.name for e in forged.exercises if e.id == f.exercise for t in e.tests if t.status == "passed"
                  and any(u.name == t.name and u.status != "passed" for h in honest.exercises for u in h.tests)]
        return False, (f"FORGED: {f.source.name} earned {got:g} against its honest twin {f.twin.name}'s {twin:g}; "
                       f"the forged evidence bought: {', '.join(gained) or '?'}. Rest those points on values "
                       "or on a measurement outside the sandbox, or make the test advice (0 points)")
    return True, f"{got:g} <= twin {f.twin.name} {twin:g}" + (", flagged" if forged.flagged else "")
