"""Prove an assignment's suites sound by grading its own material.

The reference must earn full marks; the stubs 0; every correct alternative
full marks; every mutant must lose points on its own exercise and nowhere
else. Each submission is every exercise's reference code with one file
swapped in, one cell group per exercise, so a mutant is judged in context.

This module composes those submissions; ``torchgrader validate``
(:mod:`autograder.authoring.validate`) grades them and judges the results, after its
static authoring checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import Assignment

SEP = "--"


@dataclass
class Case:
    """One generated submission and what it must score."""

    name: str
    kind: str  # reference | stub | alternative | mutant
    exercise: str  # the exercise whose file was swapped ("" for reference/stub)
    source: Path  # the swapped-in file
    path: Path = field(default_factory=Path)


WHOLE_FILE = "# torchgrader: whole-file"


def is_whole_file(text: str) -> bool:
    """A case file that replaces the reference instead of redefining part of it.

    Most mutants and alternatives change one or two functions: they are written
    as those functions alone and appended to the reference, as a student's
    later cell redefines an earlier one. A case that must *delete* code (a
    mutant missing a function) says so on a line of its own.
    """
    return any(line.strip() == WHOLE_FILE for line in text.splitlines())


def compose(assignment: Assignment, swap: dict[str, Path], dest: Path, *, all_stubs: bool = False,
            stubs: tuple[str, ...] = ()) -> Path:
    """Write a .py submission: per exercise, its reference (or stub), with a swapped case on top.

    ``stubs`` names exercises whose stub stands in for the reference (``torchgrader try X --against stub``).
    """
    chunks = []
    for ex in assignment.exercises:
        base = ex.stub if all_stubs or ex.id in stubs or not ex.reference.exists() else ex.reference
        case = swap.get(ex.id)
        parts = []
        if base.exists() and not (case and is_whole_file(case.read_text())):
            parts.append(base.read_text())
        if case:
            parts.append(case.read_text())
        if not parts:
            continue
        text = "\n\n".join(parts)
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

