"""``torchgrader release ASSIGNMENT --out DIR``: the student bundle, and proof that nothing staff-only leaks.

The bundle::

    DIR/<assignment>.ipynb              the notebook: statements, stubs, a check cell per exercise
    DIR/HOWTO.md                        how to work on it and check it
    DIR/assignments/<assignment>/...    per exercise: exercise.toml, statement.md, public_test.py
                                        (what `torchgrader check` and the check cells need)
    DIR/data/<exercise>/...             an exercise's public data/ folder, when it has one
    DIR/torchgrader-*.whl               the checker (`pip install` it; no hidden material in it)

It is built only from the public side of the course (``assignments/``); then
every file in it is scanned (:func:`find_leaks`) for the bodies of the
references, alternatives, mutants, probes and hidden tests, and the release
fails if any is found.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.assignment import (
    ASSIGNMENT_TOML,
    DATA_DIR,
    HIDDEN_SIDE,
    PUBLIC_FILES,
    STAFF_DIRS,
    STAFF_FILES,
    Assignment,
    CourseDir,
    find_course,
    load_assignment,
)
from autograder.authoring.notebook import build
from autograder.defaults import Owner, add_option
from autograder.errors import AssignmentError, Exit
from autograder.report.files import writable_folder

HOWTO = """\
# {title}: how to work on it

## Set up, once

Checking your work runs on **Linux** (Windows: inside WSL 2; macOS: a Linux VM or
container, or your course's JupyterHub). On macOS or Windows itself, `check()`
only lists what each exercise still leaves to write and says why it cannot run
the tests there; your submission is graded on the course's Linux grader either way.

1. A virtual environment for this course, in this folder (Python 3.10 or newer):

       python3 -m venv .venv
       source .venv/bin/activate            # Windows (PowerShell): .venv\\Scripts\\Activate.ps1

2. PyTorch {torch}, the version the graded tests were validated against (the CPU
   build is enough), then this folder's checker and Jupyter, into that environment:

       pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu
       pip install "./{wheel}[data]" jupyterlab

   The checker is the `{wheel}` file in this folder; it provides the
   `autograder` module the check cells import. Do **not** `pip install autograder`:
   that is an unrelated package on PyPI. (`[data]` brings scikit-learn, which some
   exercises load their data sets with.)

3. Start Jupyter from this environment, **in this folder** (the check cells find
   the public tests in `assignments/` next to the notebook):

       python -m jupyter lab {notebook}

   If a check cell says `No module named 'autograder'`, the notebook's kernel is
   another environment's Python (VS Code, or a Jupyter started elsewhere, picks
   its own). Register this environment as a kernel and choose it in the notebook
   (Kernel > Change Kernel):

       python -m ipykernel install --user --name {kernel} --display-name "Python ({kernel})"

## Work

1. For each exercise, read the statement and fill in every function and class
   that raises `NotImplementedError`. Keep the names and signatures: the grader
   calls them by name.
2. Run the cell with your code, then the exercise's check cell (`check("<exercise>")`).
   It runs the public tests on the code you have run in this kernel, in the same
   sandbox as grading, and prints what passes and what to fix. From a terminal,
   `torchgrader check {notebook}` checks the saved notebook instead (from
   another folder: `torchgrader check path/to/{notebook} --course path/to/this/folder`).
   If your course uses nbgrader, `nbgrader validate` runs these same check
   cells; `torchgrader check` is the direct way.
3. Public tests carry no points and are a start, not a guarantee: the graded
   tests are hidden and use other inputs and edge cases.
4. Submit `{notebook}` (saved, with your code in it). Extra cells of your own are
   fine; a cell that raises or hangs costs only the exercises that depend on it.

Exercises: {exercises}.
"""


def release(assignment: Assignment, out: Path, *, force: bool = False, server: str = "") -> list[Path]:
    """Write the bundle; returns its files. Raises AssignmentError when something staff-only leaked.

    ``server``: the course's torchgrader service, named in the notebook's metadata so that ``submit()``
    finds it (the same for the whole class; each student's token stays on their own machine).
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not force:
        raise AssignmentError(f"{out} is not empty: choose a new folder (or pass --force to write into it)")
    writable_folder(out)
    written: list[Path] = []
    nb_name = f"{assignment.id}.ipynb"
    nb = build(assignment, "stub")
    if server:
        nb.metadata["torchgrader"]["server"] = server.rstrip("/")
    nbformat.validate(nb)
    nbformat.write(nb, str(out / nb_name))
    written.append(out / nb_name)
    dest = CourseDir(out).public(assignment.id)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(assignment.public_dir / ASSIGNMENT_TOML, dest / ASSIGNMENT_TOML)
    written.append(dest / ASSIGNMENT_TOML)
    for ex in assignment.exercises:
        (dest / ex.id).mkdir(exist_ok=True)
        for name in PUBLIC_FILES:
            src = ex.public_dir / name
            if src.is_file():
                shutil.copyfile(src, dest / ex.id / name)
                written.append(dest / ex.id / name)
        data = ex.data_dir
        if data.is_dir():
            target = out / DATA_DIR / ex.id
            shutil.copytree(data, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".*"))
            written += [p for p in target.rglob("*") if p.is_file()]
    from autograder.authoring.wheel import build_wheel

    wheel = build_wheel(out)
    written.append(wheel)
    howto = out / "HOWTO.md"
    from autograder.authoring.stamp import torch_version

    howto.write_text(HOWTO.format(title=assignment.title, notebook=nb_name, wheel=wheel.name, torch=torch_version(),
                                  kernel=f"torchgrader-{assignment.id}",
                                  exercises=", ".join(f"`{e.id}`" for e in assignment.exercises)))
    written.append(howto)
    leaks = find_leaks(out, assignment)
    if leaks:
        raise AssignmentError("the bundle contains staff-only material:\n" + "\n".join(f"  {x}" for x in leaks))
    return written


# ---------------------------------------------------------------------- leaks
@dataclass(frozen=True)
class Fingerprint:
    text: str  # normalized source: stripped lines, blank lines dropped
    origin: str  # "solutions/.../reference.py:12 (def f)"


_COMMENT = re.compile(r"(^|\s)#.*$")


def normalize(text: str) -> str:
    """Lines stripped of indentation and comments, blank lines dropped (applied to both sides of a search)."""
    lines = (_COMMENT.sub("", ln).strip() for ln in text.splitlines())
    return "\n".join(ln for ln in lines if ln)


def staff_files(assignment: Assignment) -> list[Path]:
    out = []
    for ex in assignment.exercises:
        out += [p for p in (ex.reference, ex.hidden_tests, ex.probes) if p.is_file()]
        out += ex.alternatives() + ex.mutants()
    return out


def _public_text(assignment: Assignment) -> str:
    """Everything students are meant to have (stubs, public tests, statements): given code is no leak."""
    parts = []
    for ex in assignment.exercises:
        for p in (ex.stub, ex.public_tests, ex.statement):
            if p.is_file():
                parts.append(normalize(p.read_text()))
    return "\n" + "\n".join(parts) + "\n"


def fingerprints(assignment: Assignment) -> list[Fingerprint]:
    """Every function body, class body and top-level statement of the staff-only files.

    Bodies that also occur in the public material (code given in a stub, say)
    are not fingerprints: students are meant to have them.
    """
    public = _public_text(assignment)
    out: list[Fingerprint] = []
    for path in staff_files(assignment):
        src = path.read_text()
        try:
            tree = ast.parse(src)
        except SyntaxError:
            out.append(Fingerprint(normalize(src), str(path)))
            continue
        rel = path.relative_to(assignment.course) if path.is_relative_to(assignment.course) else path
        pieces: list[tuple[int, str, list[ast.stmt]]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                        and isinstance(body[0].value.value, str) and len(body) > 1:
                    body = body[1:]  # the docstring is not the code
                pieces.append((node.lineno, f"{'class' if isinstance(node, ast.ClassDef) else 'def'} {node.name}",
                               body))
        top = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom | ast.FunctionDef
                                                      | ast.AsyncFunctionDef | ast.ClassDef | ast.Expr)]
        pieces += [(n.lineno, "module-level statement", [n]) for n in top]
        for line, what, body in pieces:
            seg = "\n".join(ast.get_source_segment(src, s, padded=True) or "" for s in body)
            text = normalize(seg)
            if len(text) < 12 or f"\n{text}\n" in public:
                continue
            out.append(Fingerprint(text, f"{rel}:{line} ({what})"))
    return out


def _bundle_texts(out: Path) -> list[tuple[Path, str]]:
    texts = []
    for p in sorted(out.rglob("*")):
        if not p.is_file():
            continue
        try:
            raw = p.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        texts.append((p, f"\n{normalize(raw)}\n"))
        if p.suffix == ".ipynb":  # cells' sources as text, not JSON-escaped
            try:
                cells = json.loads(raw).get("cells", [])
                joined = "\n".join("".join(c.get("source", "")) if isinstance(c.get("source"), list)
                                   else str(c.get("source", "")) for c in cells)
                texts.append((p, f"\n{normalize(joined)}\n"))
            except (ValueError, AttributeError):
                pass
    return texts


def find_leaks(out: Path, assignment: Assignment) -> list[str]:
    """Staff-only material found in the folder ``out``: one line per leak, empty when clean."""
    leaks = []
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out)
        if p.name in STAFF_FILES or any(part in (*STAFF_DIRS, HIDDEN_SIDE) for part in rel.parts):
            leaks.append(f"{rel}: a staff-only file name")
    texts = [(p, text, set(text.split("\n"))) for p, text in _bundle_texts(out)]
    for fp in fingerprints(assignment):
        first = fp.text.split("\n", 1)[0]
        for p, text, lines in texts:
            # whole lines: `return model` is not in `return model, opt`; a fingerprint whose first line is no
            # line of the file cannot be in it (a set lookup first: thousands of fingerprints, dozens of files)
            if first in lines and f"\n{fp.text}\n" in text:
                leaks.append(f"{p.relative_to(out)}: contains {fp.origin}")
                break
    return sorted(set(leaks))


# ---------------------------------------------------------------------- command line
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    p.add_argument("--out", required=True, help="folder for the student bundle (new or empty)")
    p.add_argument("--force", action="store_true", help="write into a non-empty folder")
    add_option(p, "--server", owner=Owner(release, "server"),
               help="the course's torchgrader service address (`torchgrader serve`), for `submit()` in the notebook")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
    p.add_argument("--unvalidated", action="store_true",
                   help="release even though the material has not passed `torchgrader validate` since its last "
                        "change (the static checks still run)")


def ready(course: Path, assignment_id: str, *, unvalidated: bool = False) -> list[str]:
    """Why the assignment may not be released yet (empty when it may).

    Every static check (names defined by two exercises, TODO titles, points...)
    must pass; and the material must be what last passed a full ``validate``
    (:mod:`autograder.authoring.stamp`), unless ``unvalidated``.
    """
    from autograder.authoring.stamp import validated
    from autograder.authoring.validate import static_phase

    _, _, problems = static_phase(course, assignment_id)
    out = [p.format(course) for p in problems]
    ok, why = validated(course, assignment_id)
    if not ok and not unvalidated:
        out.append(f"{why}; releasing unvalidated material needs --unvalidated")
    return out


def cmd_release(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    refused = ready(course, args.assignment, unvalidated=args.unvalidated)
    if refused:
        print(f"release {args.assignment}: refused, nothing was written:", file=sys.stderr)
        for line in refused:
            print(f"  {line}", file=sys.stderr)
        return Exit.ERROR
    if args.unvalidated:
        from autograder.authoring.stamp import validated

        ok, why = validated(course, args.assignment)
        if not ok:  # said before the bundle, so it is not lost under the list of files
            print(f"release {args.assignment}: UNVALIDATED, released anyway (--unvalidated): {why}", file=sys.stderr)
    a = load_assignment(args.assignment, course)
    files = release(a, Path(args.out), force=args.force, server=args.server)
    print(f"released {a.id} to {args.out}: {len(files)} files, checked for staff-only material (none found)")
    for p in files:
        print(f"  {p.relative_to(args.out)}")
    return 0

