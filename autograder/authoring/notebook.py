"""Build an assignment's notebook from its exercise folders.

The student notebook is generated, never edited by hand: statement, stub
cells and a check cell per exercise (``from autograder import check;
check("<id>")``, which runs the public tests from inside Jupyter and does
nothing when graded). The same builder with the references swapped in makes
the reference notebook used as a sample.
The notebook is also a valid nbgrader *source* notebook (schema 3), so a course
on nbgrader puts it in ``source/<assignment>/`` and runs ``nbgrader
generate_assignment`` unchanged:

- a stub cell is a solution cell whose ``raise NotImplementedError`` lines sit
  between ``### BEGIN SOLUTION`` / ``### END SOLUTION``: nbgrader replaces only
  those lines (with its own ``raise NotImplementedError()``), so students see
  the stub, signatures and given code included; a cell with nothing to fill
  in is a plain editable cell that nbgrader leaves alone;
- each exercise's check cell is a locked grade cell named after the exercise
  (``grade_id`` = exercise id, ``points`` = its points): exactly the cells
  ``torchgrader grade --nbgrader-db`` scores, present from the start, so
  ``generate_assignment --force`` still works after grading.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat

from autograder.assignment import Assignment, load_assignment
from autograder.authoring.change import applied, is_change
from autograder.defaults import Owner, add_option

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


BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"  # nbgrader's default solution delimiters
_TODO = re.compile(r"^(?P<indent>[ \t]*)raise NotImplementedError\b.*$")


def _meta(grade_id: str, *, solution: bool, locked: bool, points: float | None = None) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "locked": locked, "grade": points is not None,
            "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def mark_solutions(code: str) -> tuple[str, bool]:
    """Put each ``raise NotImplementedError`` line of a stub between nbgrader's solution delimiters.

    Returns the cell's new source and whether it has anything for the student to fill in.
    """
    out, found = [], False
    for line in code.splitlines():
        m = _TODO.match(line)
        if m:
            found = True
            out += [f"{m['indent']}{BEGIN}", line, f"{m['indent']}{END}"]
        else:
            out.append(line)
    return "\n".join(out), found


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
    for number, ex in enumerate(assignment.exercises, start=1):
        text = ex.statement.read_text().strip() if ex.statement.exists() else ""
        if not text.startswith("#"):  # the heading comes from exercise.toml's title, its one place
            text = f"## {number}. {ex.title} (`{ex.id}`)\n\n{text}".strip()
        nb.cells.append(nbformat.v4.new_markdown_cell(
            text, metadata=_meta(f"{ex.id}-statement", solution=False, locked=True)))
        src = (swap or {}).get(ex.id) or (ex.reference if code == "reference" else ex.stub)
        source = src.read_text() if src.exists() else ""
        if src != ex.reference and is_change(source):  # a change mutant: its reference, changed
            source = applied(src, ex.reference, source)
        for i, cell in enumerate(split_cells(source) if src.exists() else []):
            todo = True
            if code == "stub" and ex.id not in (swap or {}):
                cell, todo = mark_solutions(cell)
            nb.cells.append(nbformat.v4.new_code_cell(
                cell, metadata=_meta(f"{ex.id}-code-{i + 1}", solution=todo, locked=False)))
        if check_cells:  # the exercise's grade cell: where nbgrader keeps its points
            nb.cells.append(nbformat.v4.new_code_cell(
                check_cell(ex.id), metadata=_meta(ex.id, solution=False, locked=True, points=ex.points)))
    return nb


def check_cell(exercise_id: str) -> str:
    """A cell that checks one exercise from inside Jupyter; a no-op (one printed line) when graded."""
    return (f"# Check `{exercise_id}` against its public tests (a few seconds, in the grading sandbox).\n"
            "# (This cell holds the exercise's points for nbgrader; torchgrader's hidden tests award them.)\n"
            "from autograder import check\n"
            "\n"
            f'check("{exercise_id}")')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    add_option(p, "--code", choices=["stub", "reference"], owner=Owner(build, "code"), help="what the code cells hold")
    p.add_argument("--out", required=True, help="the notebook to write")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


def cmd_notebook(args: argparse.Namespace) -> int:
    a = load_assignment(args.assignment, Path(args.course) if args.course else None, need_hidden=False)
    nbformat.write(build(a, args.code), args.out)
    print(f"wrote {args.out}")
    return 0
