"""``torchgrader new ASSIGNMENT EXERCISE``: scaffold an exercise with every file in place.

``torchgrader new ASSIGNMENT`` (no exercise) creates an empty assignment, and
``torchgrader new ASSIGNMENT --from OTHER`` a copy of another one's material
without its validation record (:func:`new_assignment`).

The scaffold is a small complete exercise (one function, one public test, two
hidden tests with points and a keyed misconception, one alternative, one
mutant written as a small change) that passes ``torchgrader validate`` as
generated, so staff edit it rather than replace it. The exercise is appended
to the assignment's ``assignment.toml`` (the assignment is created when it
does not exist yet; its TODO title is reported by validate until it is set).

``torchgrader new-mutant ASSIGNMENT EXERCISE NAME`` adds a mutant: the
``# misconception:`` header, a docstring to write, and the reference's
function as a change to edit (:mod:`autograder.authoring.change`);
``torchgrader tidy-mutants ASSIGNMENT`` rewrites mutants as their minimal
change (older, full-code mutants included).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from autograder.assignment import (
    ALTERNATIVES_DIR,
    ASSIGNMENT_TOML,
    MUTANTS_DIR,
    REFERENCE,
    STUB,
    CourseDir,
    Exercise,
    ExerciseLayout,
    find_course,
)
from autograder.authoring.lint import ID_PATTERN
from autograder.defaults import Owner, add_option, default_of
from autograder.errors import AssignmentError, Exit

# A small, complete example that passes `validate` as generated: staff edit it rather than replace it.
# Keyed by the ExerciseLayout attribute that names the file ("attr/name" for a file inside a folder).
# {f} is the example function's name, {e} the exercise id, {title} the title, {p1}/{p2} the hidden points,
# {timeout} the seconds per test (Exercise's default).
FILES = {
    "toml": '''\
# The exercise id is its folder's name ({e}); the title below is the only place it is written.
title = "{title}"
points = {points:g}                 # must equal the sum of the hidden tests' points
timeout = {timeout:g}                # seconds per test (wall clock)
gpu = false                 # graded on CUDA when available, CPU fallback otherwise
''',
    "statement": '''\
Write `{f}(x, dim=0, eps=1e-5)`, which standardizes `x` along `dim`: subtract
the mean and divide by the standard deviation, so that every slice along `dim`
ends with mean 0 and variance 1.

- `x` is a floating-point tensor of any shape; return a tensor of the same
  shape and dtype, and leave `x` unchanged.
- Use the *biased* variance (divide by the number of entries `n`, not `n - 1`)
  and add `eps` under the square root: `(x - mean) / sqrt(var + eps)`.
''',
    "stub": '''\
import torch


def {f}(x, dim=0, eps=1e-5):
    """Standardize `x` along `dim`: (x - mean) / sqrt(var + eps), with the biased variance."""
    raise NotImplementedError
''',
    "public_tests": '''\
"""Public tests of `{e}`: students run them with `torchgrader check` (no points; the graded suite is hidden)."""
import torch

from autograder.judge import assert_close


def test_small_batch(student):
    """{f}(x) on a 2x2 batch"""
    x = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    expected = (x - x.mean(dim=0)) / torch.sqrt(x.var(dim=0, unbiased=False) + 1e-5)
    assert_close(student.{f}(x), expected, rtol=1e-5, atol=1e-6, name="{f}(x) for a 2x2 batch")
''',
    "reference": '''\
import torch


def {f}(x, dim=0, eps=1e-5):
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)
''',
    "hidden_tests": '''\
"""Hidden suite of `{e}`. Every test: a docstring (its name for students), points, messages that teach.

Expected values are computed here, in the judge, never by asking the sandbox. A misconception
message is given only when the returned value is exactly what that mistake produces.
"""
import pytest
import torch

from autograder.judge import assert_close


def expected(x, dim=0, eps=1e-5):
    return (x - x.mean(dim=dim, keepdim=True)) / torch.sqrt(x.var(dim=dim, unbiased=False, keepdim=True) + eps)


@pytest.mark.points({p1:g})
def test_random_batch(student):
    """{f}(x) on a random float64 batch"""
    x = torch.randn(8, 3, dtype=torch.float64) * 3 + 1
    unbiased = (x - x.mean(dim=0, keepdim=True)) / torch.sqrt(x.var(dim=0, keepdim=True) + 1e-5)
    assert_close(
        student.{f}(x), expected(x), rtol=1e-7, atol=1e-9, name="{f}(x) for an (8, 3) float64 batch",
        misconceptions={{
            "unbiased_variance": (
                "The variance was divided by n - 1 (torch.var's default, the unbiased estimate); "
                "standardizing uses the biased variance, divided by n (unbiased=False).",
                unbiased,
            ),
        }},
    )


@pytest.mark.points({p2:g})
def test_other_dim_and_eps(student):
    """{f}(x, dim=1, eps=0.1) uses the dim and eps it is given"""
    x = torch.rand(4, 5, dtype=torch.float64)
    assert_close(student.{f}(x, dim=1, eps=0.1), expected(x, dim=1, eps=0.1), rtol=1e-7, atol=1e-9,
                 name="{f}(x, dim=1, eps=0.1)")
''',
    "probes": '''\
"""Optional trusted harness that runs inside the sandbox: `sandbox.probe("name", ...)` calls
`name(student, ...)`. Students' code can see it at run time: never put expected answers here.
Delete this file if the exercise needs no probe."""
''',
    "alternatives_dir/explicit_sums.py": '''\
"""A correct alternative, written differently from the reference: it must earn full marks.

Appended after the reference when graded, so it holds only the function(s) it redefines.
"""
import torch


def {f}(x, dim=0, eps=1e-5):
    n = x.shape[dim]
    centered = x - x.sum(dim=dim, keepdim=True) / n
    return centered / ((centered * centered).sum(dim=dim, keepdim=True) / n + eps).sqrt()
''',
    "mutants_dir/unbiased_variance.py": '''\
"""Divides the variance by n - 1 (torch.var's default) instead of n.

A mutant is a small change to the reference: CHANGE holds the lines it changes, as
`diff -U0` of the reference and an edited copy prints them. Its header names the
misconception key the suite must give it.
"""
# misconception: unbiased_variance

CHANGE = r"""
@@ -6 +6 @@ def {f}(x, dim=0, eps=1e-5):
-    var = x.var(dim=dim, unbiased=False, keepdim=True)
+    var = x.var(dim=dim, keepdim=True)
"""
''',
}

EXAMPLE_FUNCTION = "standardize"
EXAMPLE_TITLE = "Standardize a batch"


def _append_exercise(meta: Path, exercise: str) -> None:
    """Add the id to ``exercises = [...]``, keeping the file's comments and layout."""
    text = meta.read_text()
    m = re.search(r"^exercises\s*=\s*\[(.*?)\]", text, re.S | re.M)
    if m is None:
        text = text.rstrip("\n") + f'\nexercises = ["{exercise}"]\n'
    else:
        body = m.group(1)
        items = body.rstrip()
        if "\n" in body:  # one id per line
            indent = re.search(r"\n([ \t]*)\S", body)
            pad = indent.group(1) if indent else "    "
            sep = "" if items.endswith(",") or not items.strip() else ","
            new_body = f'{items}{sep}\n{pad}"{exercise}",\n'
        else:
            sep = ", " if items.strip() and not items.endswith(",") else (" " if items.strip() else "")
            new_body = f'{items}{sep}"{exercise}"'
        text = text[:m.start(1)] + new_body + text[m.end(1):]
    meta.write_text(text)


def _taken_names(course: Path, assignment: str) -> set[str]:
    """Top-level functions and classes the assignment's stubs and references already define."""
    import ast

    names: set[str] = set()
    cd = CourseDir(course)
    for pattern, root in ((f"*/{STUB}", cd.public(assignment)), (f"*/{REFERENCE}", cd.hidden(assignment))):
        for path in root.glob(pattern):
            try:
                tree = ast.parse(path.read_text())
            except (SyntaxError, UnicodeDecodeError):
                continue
            names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef
                                                              | ast.ClassDef)}
    return names


def _target(layout: ExerciseLayout, key: str) -> Path:
    attr, _, name = key.partition("/")
    path = getattr(layout, attr)
    return path / name if name else path


def scaffold(course: Path, assignment: str, exercise: str, *, points: float = 10, title: str | None = None,
             function: str | None = None) -> list[Path]:
    """Create the exercise's files; returns them. Refuses to overwrite anything.

    The example function is ``standardize`` (or ``standardize_<exercise>`` when the assignment
    already defines that name: a submission is every exercise's code in one namespace).
    """
    if not ID_PATTERN.match(exercise):
        raise AssignmentError(f"{exercise!r}: an exercise id must be lowercase letters, digits and underscores, "
                              "starting with a letter (it names a gradebook column and a notebook section)")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", assignment):
        raise AssignmentError(f"{assignment!r} is not a usable assignment id")
    layout = ExerciseLayout.of(course, assignment, exercise)
    targets = {_target(layout, key): body for key, body in FILES.items()}
    existing = [p for p in targets if p.exists()]
    for d in (layout.public_dir, layout.hidden_dir):
        if d.exists():
            existing.append(d)
    if existing:
        raise AssignmentError(f"{existing[0]} already exists: `new` never overwrites an exercise")
    taken = _taken_names(course, assignment)
    if function is None:
        function = EXAMPLE_FUNCTION if EXAMPLE_FUNCTION not in taken else f"{EXAMPLE_FUNCTION}_{exercise}"
    if not function.isidentifier() or function in taken:
        raise AssignmentError(f"{function!r} cannot be the example function: "
                              + ("another exercise of the assignment defines it" if function in taken
                                 else "not a Python name"))
    meta = CourseDir(course).assignment_toml(assignment)
    if not meta.exists():
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(ASSIGNMENT_META.format(a=assignment))
    p1 = round(points * 0.6, 6)
    fields = {"e": exercise, "points": points, "f": function, "title": (title or EXAMPLE_TITLE).replace('"', "'"),
              "p1": p1, "p2": round(points - p1, 6), "timeout": default_of(Exercise, "timeout")}
    created = []
    for path, body in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body.format(**fields))
        created.append(path)
    _append_exercise(meta, exercise)
    return created


ASSIGNMENT_META = ('id = "{a}"\ntitle = "TODO: the assignment\'s title"\n'
                   "# Order of the exercises in the notebook and the gradebook.\nexercises = []\n")


def new_assignment(course: Path, assignment: str, *, copy_of: str | None = None) -> list[Path]:
    """Create an assignment: empty, or a copy of ``copy_of``'s material. Refuses to overwrite anything.

    A copy takes every file of material (:func:`autograder.assignment.material_files`: no caches, no
    dot-files), so the original's validation record (``.torchgrader-validated.json``) stays behind: the copy
    has passed nothing yet. Its ``assignment.toml`` gets the new id and a TODO title (validate reports it
    until it is set), and keeps the exercises and their order.
    """
    from autograder.assignment import material_files

    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", assignment):
        raise AssignmentError(f"{assignment!r} is not a usable assignment id (letters, digits, '.', '_', '-')")
    cd = CourseDir(course)
    for folder in (cd.public(assignment), cd.hidden(assignment)):
        if folder.exists():
            raise AssignmentError(f"{folder} already exists: `new` never overwrites an assignment")
    created: list[Path] = []
    if copy_of is not None:
        source_meta = cd.assignment_toml(copy_of)
        if not source_meta.is_file():
            known = cd.assignment_ids()
            raise AssignmentError(f"no assignment {copy_of!r} to copy in {cd.public()}"
                                  + (f"; known: {', '.join(known)}" if known else ""))
        for path, side, rel in material_files(course, copy_of):
            dest = course / side / assignment / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
            created.append(dest)
        meta = cd.assignment_toml(assignment)
        text = meta.read_text()
        text = re.sub(r'^id\s*=.*$', f'id = "{assignment}"', text, count=1, flags=re.M)
        if not re.search(r"^id\s*=", text, re.M):
            text = f'id = "{assignment}"\n' + text
        text = re.sub(r"^title\s*=.*$", f'title = "TODO: the assignment\'s title (copied from {copy_of})"', text,
                      count=1, flags=re.M)
        meta.write_text(text)
    else:
        meta = cd.assignment_toml(assignment)
        meta.parent.mkdir(parents=True)
        meta.write_text(ASSIGNMENT_META.format(a=assignment))
        created.append(meta)
    cd.hidden(assignment).mkdir(parents=True, exist_ok=True)
    return created


def cmd_new(args: argparse.Namespace) -> int:
    from autograder.authoring.lint import collisions

    course = Path(args.course) if args.course else find_course()
    cd = CourseDir(course)
    if args.exercise is None:
        made = new_assignment(course, args.assignment, copy_of=args.copy_of)
        what = f"a copy of {args.copy_of} ({len(made)} files; its validation record is not copied)" \
            if args.copy_of else "an empty assignment"
        print(f"created assignment {args.assignment!r}: {what}\n"
              f"  {cd.public(args.assignment).relative_to(course)}/   what students get\n"
              f"  {cd.hidden(args.assignment).relative_to(course)}/   staff-only\n"
              f"\nNext: set its title in {cd.assignment_toml(args.assignment).relative_to(course)}, then\n"
              f"  torchgrader new {args.assignment} EXERCISE     # one exercise, every file in place\n"
              f"  torchgrader validate {args.assignment}")
        return 0
    if args.copy_of:
        raise AssignmentError("--from copies a whole assignment: leave out the exercise "
                              f"(`torchgrader new {args.assignment} --from {args.copy_of}`)")
    created = scaffold(course, args.assignment, args.exercise, points=args.points, title=args.title,
                       function=args.function)
    print(f"created exercise {args.exercise!r} in {args.assignment} (listed in {ASSIGNMENT_TOML}): a small complete "
          "example (one function, a public test, two hidden tests, an alternative, a mutant) that passes validate")
    for p in created:
        print(f"  {p.relative_to(course)}")
    ids = cd.listed_exercises(args.assignment) or []
    clashes = collisions(course, args.assignment, ids)
    for c in clashes:
        print(f"warning: {c.format(course)}", file=sys.stderr)
    print("\nNext: edit each file into your exercise, trying each case as you go:\n"
          f"  torchgrader try {args.assignment} {args.exercise} --against reference      # or stub, "
          f"{ALTERNATIVES_DIR}/explicit_sums.py, {MUTANTS_DIR}/unbiased_variance.py\n"
          f"  torchgrader new-mutant {args.assignment} {args.exercise} NAME            # one more misconception\n"
          f"  torchgrader validate {args.assignment} --exercise {args.exercise}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id (created when it does not exist)")
    p.add_argument("exercise", nargs="?", help="new exercise id (its folder's name): lowercase letters, digits, "
                   "underscores; without it, a new assignment is created (empty, or a copy with --from)")
    p.add_argument("--from", dest="copy_of", metavar="ASSIGNMENT",
                   help="with no exercise: copy this assignment's material (not its validation record)")
    add_option(p, "--points", type=float, owner=Owner(scaffold, "points"), help="the exercise's points")
    p.add_argument("--title", help=f"the exercise's title (default: the example's, {EXAMPLE_TITLE!r})")
    p.add_argument("--function", help=f"the example function's name (default: {EXAMPLE_FUNCTION!r}, or "
                                      f"{EXAMPLE_FUNCTION}_<exercise> when the assignment already has one)")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


# ---------------------------------------------------------------------- new-mutant
MUTANT_DOC = '''\
"""TODO: the misconception, in one sentence: what the student does, and why it is wrong.

CHANGE is the mistake, as a change to the reference. Below it holds the function(s) unchanged
(each line after a space): mark each line to change with `-` instead of its space and write what
stands there instead on `+` lines after it; then `torchgrader tidy-mutants {assignment} --exercise
{exercise}` keeps only the lines the change needs.
"""
# misconception: {key}'''


def new_mutant(course: Path, assignment: str, exercise: str, name: str, *, functions: list[str] | None = None,
               misconception: str | None = None) -> Path:
    """Write ``mutants/<name>.py``: the header, a TODO docstring and the reference's function(s) as an
    unchanged ``CHANGE`` (:mod:`autograder.authoring.change`) to edit.

    ``functions`` defaults to the exercise's contract (what its stub leaves to write) when that is one
    name; validate refuses the file until the docstring is written and the change changes something.
    """
    import ast

    from autograder.authoring.change import render
    from autograder.authoring.lint import contract_names

    if not re.match(r"^[a-z][a-z0-9_]*$", name):
        raise AssignmentError(f"{name!r}: a mutant's name is lowercase letters, digits and underscores "
                              "(it names the misconception: `unbiased_variance`)")
    layout = ExerciseLayout.of(course, assignment, exercise)
    reference, stub = layout.reference, layout.stub
    dest = layout.mutants_dir / f"{name}.py"
    if dest.exists():
        raise AssignmentError(f"{dest} already exists")
    try:
        source = reference.read_text()
        tree = ast.parse(source)
    except (OSError, SyntaxError) as e:
        raise AssignmentError(f"{reference}: cannot be read ({e})") from None
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    if not functions:
        contract = list(contract_names(ast.parse(stub.read_text()))) if stub.is_file() else []
        if len(contract) != 1:
            raise AssignmentError(f"say which function(s) the mutant changes: --function NAME (one of "
                                  f"{', '.join(defs)})")
        functions = contract
    missing = [f for f in functions if f not in defs]
    if missing:
        raise AssignmentError(f"{reference} does not define {', '.join(missing)}; it defines {', '.join(defs)}")
    lines = source.splitlines()
    hunks = []
    for node in sorted((defs[f] for f in functions), key=lambda n: n.lineno):
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        end = node.end_lineno or node.lineno
        n = end - start + 1
        hunks.append(f"@@ -{start},{n} +{start},{n} @@\n" + "\n".join(f" {x}" for x in lines[start - 1:end]))
    dest.parent.mkdir(parents=True, exist_ok=True)
    prelude = MUTANT_DOC.format(key=misconception or name, assignment=assignment, exercise=exercise)
    dest.write_text(render(prelude, "\n".join(hunks) + "\n"))
    return dest


def cmd_new_mutant(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    path = new_mutant(course, args.assignment, args.exercise, args.name, functions=args.function,
                      misconception=args.misconception)
    print(f"created {path.relative_to(course)}: write its docstring, mark the lines CHANGE changes, then\n"
          f"  torchgrader tidy-mutants {args.assignment} --exercise {args.exercise}\n"
          f"  torchgrader try {args.assignment} {args.exercise} --against {path.parent.name}/{path.name} "
          "--show-feedback")
    return 0


def tidy_mutants(course: Path, assignment: str, exercises: list[str] | None = None,
                 out: Callable[[str], None] = print) -> int:
    """Rewrite each mutant of the exercises as its minimal change; the number that must be written by hand.

    An older mutant (functions appended after the reference, or a whole-file copy) becomes the change it
    stands for; a change keeps its docstring and header and loses the context its hunks need not carry.
    Each rewritten file applies to exactly the code it stood for, or it is left as it was.
    """
    from autograder.assignment import load_assignment
    from autograder.authoring.change import tidied

    a = load_assignment(assignment, course)
    chosen = [a.exercise(e) for e in exercises] if exercises else a.exercises
    by_hand = 0
    for ex in chosen:
        for path in ex.mutants():
            shown = path.resolve().relative_to(Path(course).resolve()) if path.is_relative_to(course) else path
            try:
                text, _ = tidied(path, ex.reference)
            except (AssignmentError, SyntaxError, OSError) as e:
                by_hand += 1
                out(f"  left as it is: {shown}: {e}")
                continue
            if text != path.read_text(encoding="utf-8"):
                path.write_text(text, encoding="utf-8")
                out(f"  rewritten: {shown}")
    return by_hand


def cmd_tidy_mutants(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    by_hand = tidy_mutants(course, args.assignment, args.exercise)
    if by_hand:
        print(f"{by_hand} mutant(s) left as they are: write their CHANGE by hand (docs/authoring.md, Mutants)")
    return Exit.NO if by_hand else Exit.OK


def add_tidy_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    p.add_argument("--exercise", action="append", help="only this exercise's mutants (repeatable)")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


def add_mutant_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    p.add_argument("exercise", help="exercise id")
    p.add_argument("name", help="the mutant's name, after its misconception (e.g. unbiased_variance)")
    p.add_argument("--function", action="append",
                   help="a function (or class) of the reference to change (repeatable; default: the stub's one "
                        "contract name)")
    p.add_argument("--misconception", help="the key in its `# misconception:` header (default: the name); "
                                           "`none` for a mistake no message names")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")
