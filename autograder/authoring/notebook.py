"""Build an assignment's notebook from its exercise folders.

The student notebook is generated, never edited by hand: statement, stub
cells and a check cell per exercise (``from autograder import check;
check("<id>")``, which runs the public tests from inside Jupyter and does
nothing when graded). The same builder with the references swapped in makes
the reference notebook used as a sample.
Cells carry nbgrader-compatible metadata so a course on nbgrader can import
the notebook.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat

from autograder.assignment import Assignment, load_assignment

CELL_MARK = "# %%"


def split_cells(text: str) -> list[str]:
    cells: list[str] = []
    cur: list[str] = []
    for ln in text.splitlines():
        if ln.startswith(CELL_MARK):
            if any(x.strip() for x in cur):
                cells.append("\n".join(cur).strip("\n"))
            cur = []
        else:
            cur.append(ln)
    if any(x.strip() for x in cur):
        cells.append("\n".join(cur).strip("\n"))
    return cells


def _meta(grade_id: str, *, solution: bool, locked: bool) -> dict:
    return {"nbgrader": {"grade_id": grade_id, "solution": solution, "locked": locked, "grade": False,
                         "schema_version": 3}}


def build(assignment: Assignment, code: str = "stub", swap: dict[str, Path] | None = None, *,
          check_cells: bool = True) -> nbformat.NotebookNode:
    """``code`` is "stub" (the student notebook) or "reference"; ``swap`` overrides per exercise.

    After each exercise's code comes a locked check cell (``check("<id>")``).
    """
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["torchgrader"] = {"assignment": assignment.id}
    intro = (
        f"# {assignment.title}\n\n"
        "Fill in every function and class marked `raise NotImplementedError`. Keep the names and "
        "signatures exactly as given: the grader calls them by name. Each exercise is graded on its "
        "own, so a broken cell costs only the exercise it belongs to.\n\n"
        "Check your work as you go: the check cell after each exercise runs its public tests on the "
        "code you have run, in the same sandbox as grading (or run `torchgrader check <this notebook>` "
        "in a terminal). Public tests carry no points; the graded tests are hidden and use other inputs."
    )
    nb.cells.append(nbformat.v4.new_markdown_cell(intro, metadata=_meta("intro", solution=False, locked=True)))
    for ex in assignment.exercises:
        if ex.statement.exists():
            nb.cells.append(nbformat.v4.new_markdown_cell(
                ex.statement.read_text().strip(), metadata=_meta(f"{ex.id}-statement", solution=False, locked=True)))
        src = (swap or {}).get(ex.id) or (ex.reference if code == "reference" else ex.stub)
        for i, cell in enumerate(split_cells(src.read_text()) if src.exists() else []):
            nb.cells.append(nbformat.v4.new_code_cell(
                cell, metadata=_meta(f"{ex.id}-code-{i + 1}", solution=True, locked=False)))
        if check_cells:
            nb.cells.append(nbformat.v4.new_code_cell(
                check_cell(ex.id), metadata=_meta(f"{ex.id}-check", solution=False, locked=True)))
    return nb


def check_cell(exercise_id: str) -> str:
    """A cell that checks one exercise from inside Jupyter; a no-op (one printed line) when graded."""
    return (f"# Check `{exercise_id}` against its public tests (a few seconds, in the grading sandbox).\n"
            "from autograder import check\n"
            "\n"
            f'check("{exercise_id}")')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    p.add_argument("--code", choices=["stub", "reference"], default="stub",
                   help="what the code cells hold (default: %(default)s)")
    p.add_argument("--out", required=True, help="the notebook to write")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


def cmd_notebook(args: argparse.Namespace) -> int:
    a = load_assignment(args.assignment, Path(args.course) if args.course else None, need_hidden=False)
    nbformat.write(build(a, args.code), args.out)
    print(f"wrote {args.out}")
    return 0
