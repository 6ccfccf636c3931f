"""Prove an assignment's suites sound by grading its own material.

The reference must earn full marks; the stubs 0; every correct alternative
full marks; every mutant must lose points on its own exercise and nowhere
else. Each submission is every exercise's reference code with one file
swapped in, one cell group per exercise, so a mutant is judged in context.

This module composes the submissions and keeps the original verdict logic;
``torchgrader validate`` (:mod:`autograder.validate`) builds on it, adds the
static authoring checks, the public-test checks and a table per exercise.
``python -m autograder.selftest ASSIGNMENT [--exercise ID ...]`` now runs
``torchgrader validate``.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import Assignment
from autograder.grade import GradeOptions, grade
from autograder.results import SubmissionResult
from autograder.sandbox.client import SandboxServer

SEP = "--"


@dataclass
class Case:
    """One generated submission and what it must score."""

    name: str
    kind: str  # reference | stub | alternative | mutant
    exercise: str  # the exercise whose file was swapped ("" for reference/stub)
    source: Path  # the swapped-in file
    path: Path = field(default_factory=Path)


@dataclass
class Verdict:
    case: Case
    ok: bool
    message: str
    result: SubmissionResult | None = None


def compose(assignment: Assignment, swap: dict[str, Path], dest: Path, *, all_stubs: bool = False) -> Path:
    """Write a .py submission: per exercise, its reference (or stub, or the swapped file)."""
    chunks = []
    for ex in assignment.exercises:
        path = swap.get(ex.id) or (ex.stub if all_stubs else ex.reference)
        if not path.exists():  # an exercise still being written: its stub stands in
            path = ex.stub
        if not path.exists():
            continue
        text = path.read_text()
        chunks.append(f"# %% [{ex.id}]\n{text}")
    dest.write_text("\n\n".join(chunks) + "\n")
    return dest


def cases(assignment: Assignment, exercises: list[str] | None, workdir: Path) -> list[Case]:
    chosen = [assignment.exercise(e) for e in exercises] if exercises else assignment.exercises
    out = [Case("reference", "reference", "", Path()), Case("stub", "stub", "", Path())]
    for ex in chosen:
        out += [Case(f"alternative{SEP}{ex.id}{SEP}{p.stem}", "alternative", ex.id, p) for p in ex.alternatives()]
        out += [Case(f"mutant{SEP}{ex.id}{SEP}{p.stem}", "mutant", ex.id, p) for p in ex.mutants()]
    for c in out:
        c.path = workdir / f"{c.name}.py"
        if c.kind == "stub":
            compose(assignment, {}, c.path, all_stubs=True)
        else:
            compose(assignment, {c.exercise: c.source} if c.exercise else {}, c.path)
    return out


def judge_case(case: Case, r: SubmissionResult, exercises: list[str] | None) -> Verdict:
    pts = {e.id: (e.points, e.max_points) for e in r.exercises if e.tests}
    scope = exercises or list(pts)
    if case.kind in ("reference", "alternative"):
        short = [f"{i} {pts[i][0]:g}/{pts[i][1]:g}" for i in scope if pts[i][0] < pts[i][1]]
        if short:
            failing = [f"{t.exercise}: {t.name}: {t.message.splitlines()[0] if t.message else t.status}"
                       for e in r.exercises if e.id in scope for t in e.tests if t.status != "passed"]
            return Verdict(case, False, f"should earn full marks but lost points on {', '.join(short)}; "
                           + " | ".join(failing[:4]), r)
        return Verdict(case, True, "full marks", r)
    if case.kind == "stub":
        earned = [f"{i} {pts[i][0]:g}" for i in scope if pts[i][0] > 0]
        internal = [t for e in r.exercises for t in e.tests if t.status == "error" and "grader could not" in t.message]
        if earned:
            return Verdict(case, False, f"stubs should earn 0 but earned {', '.join(earned)}", r)
        if internal:
            return Verdict(case, False, f"stub errors outside the student's code: {internal[0].name}: "
                           f"{internal[0].message[:200]}", r)
        return Verdict(case, True, "0 points", r)
    ex = case.exercise
    lost_elsewhere = [f"{i} {pts[i][0]:g}/{pts[i][1]:g}" for i in pts if i != ex and pts[i][0] < pts[i][1]]
    if pts[ex][0] >= pts[ex][1]:
        return Verdict(case, False, f"SURVIVED: the mutant earned full marks on {ex}; "
                       "no hidden test catches this misconception", r)
    if lost_elsewhere:
        return Verdict(case, False, f"the mutant also lost points outside {ex}: {', '.join(lost_elsewhere)}", r)
    caught = [t.name for e in r.exercises if e.id == ex for t in e.tests if t.status != "passed"]
    return Verdict(case, True, f"caught ({pts[ex][0]:g}/{pts[ex][1]:g}) by: {'; '.join(caught)}", r)


def run(assignment: Assignment, exercises: list[str] | None = None,
        server: SandboxServer | None = None) -> list[Verdict]:
    with tempfile.TemporaryDirectory(prefix="torchgrader-selftest-") as tmp:
        cs = cases(assignment, exercises, Path(tmp))
        results = grade(assignment, [c.path for c in cs], server=server,
                        options=GradeOptions(exercises=exercises))
    by_name = {r.submission: r for r in results}
    return [judge_case(c, by_name[c.name], exercises) for c in cs]


def main(argv: list[str] | None = None) -> int:
    """The old entry point: the same as ``torchgrader validate`` with the same arguments."""
    from autograder.validate import main as validate_main

    return validate_main(argv)


if __name__ == "__main__":
    sys.exit(main())
