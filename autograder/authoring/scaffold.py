"""``torchgrader new ASSIGNMENT EXERCISE``: scaffold an exercise with every file in place.

The scaffold is deliberately unfinished: its hidden suite holds one failing
placeholder test worth all the points, so ``torchgrader validate`` fails until
the real tests are written, and every file the format needs exists, so none is
forgotten. The exercise is appended to the assignment's ``assignment.toml``
(the assignment is created when it does not exist yet).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from autograder.assignment import AssignmentError, find_course
from autograder.authoring.lint import ID_PATTERN

FILES = {
    "assignments/{a}/{e}/exercise.toml": '''\
id = "{e}"
title = "TODO: a short title"
points = {points:g}                 # must equal the sum of the hidden tests' points
timeout = 10                # seconds per test (wall clock)
gpu = false                 # graded on CUDA when available, CPU fallback otherwise
''',
    "assignments/{a}/{e}/statement.md": '''\
## TODO: a short title (`{e}`)

TODO: what students write, in our own words. Name every function and class
they must define with its exact signature, the shapes and dtypes of its inputs
and outputs, and what "correct" means (tolerances are the hidden suite's).

- `{e}(x) -> Tensor`: TODO.
''',
    "assignments/{a}/{e}/stub.py": '''\
import torch


def {e}(x):
    """TODO: the docstring students see."""
    raise NotImplementedError
''',
    "assignments/{a}/{e}/public_test.py": '''\
"""Public tests of `{e}` (students run them with `torchgrader check`; the graded suite is hidden)."""
import pytest
import torch

from autograder.judge import assert_close


@pytest.mark.points(0)
def test_small_example(student):
    """TODO: the name students see for this public test"""
    x = torch.tensor([1.0, 2.0, 3.0])
    assert_close(student.{e}(x), x.clone(), name="{e}(x) on a small input")
''',
    "solutions/{a}/{e}/reference.py": '''\
import torch


def {e}(x):
    """TODO: the staff solution."""
    return x.clone()
''',
    "solutions/{a}/{e}/test_hidden.py": '''\
"""Hidden suite of `{e}`. Every test: a docstring (its name for students), points, messages."""
import pytest
import torch

from autograder.judge import assert_close, check, fail


@pytest.mark.points({points:g})
def test_placeholder(student):
    """TODO: replace this placeholder with the real hidden tests"""
    fail("This exercise's hidden tests are not written yet (placeholder from `torchgrader new`).")
''',
    "solutions/{a}/{e}/probes.py": '''\
"""Optional trusted harness that runs inside the sandbox: `sandbox.probe("name", ...)` calls
`name(student, ...)`. Students' code can see it at run time: never put expected answers here.
Delete this file if the exercise needs no probe."""
''',
    "solutions/{a}/{e}/alternatives/TODO_rename_me.py": '''\
import torch


def {e}(x):
    """TODO: a correct implementation written differently from the reference (it must earn full marks)."""
    return torch.clone(x)
''',
    "solutions/{a}/{e}/mutants/TODO_rename_me.py": '''\
"""TODO: the misconception this mutant encodes, in one sentence (it must lose points)."""
import torch


def {e}(x):
    return x
''',
}


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


def scaffold(course: Path, assignment: str, exercise: str, *, points: float = 10) -> list[Path]:
    """Create the exercise's files; returns them. Refuses to overwrite anything."""
    if not ID_PATTERN.match(exercise):
        raise AssignmentError(f"{exercise!r}: an exercise id must be lowercase letters, digits and underscores, "
                              "starting with a letter (it names a gradebook column and a notebook section)")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", assignment):
        raise AssignmentError(f"{assignment!r} is not a usable assignment id")
    targets = {rel.format(a=assignment, e=exercise): body for rel, body in FILES.items()}
    existing = [course / r for r in targets if (course / r).exists()]
    for d in (course / "assignments" / assignment / exercise, course / "solutions" / assignment / exercise):
        if d.exists():
            existing.append(d)
    if existing:
        raise AssignmentError(f"{existing[0]} already exists: `new` never overwrites an exercise")
    meta = course / "assignments" / assignment / "assignment.toml"
    if not meta.exists():
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(f'id = "{assignment}"\ntitle = "TODO: the assignment\'s title"\n'
                        "# Order of the exercises in the notebook and the gradebook.\nexercises = []\n")
    created = []
    for rel, body in targets.items():
        path = course / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body.format(e=exercise, points=points))
        created.append(path)
    _append_exercise(meta, exercise)
    return created


def cmd_new(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    created = scaffold(course, args.assignment, args.exercise, points=args.points)
    print(f"created exercise {args.exercise!r} in {args.assignment} (listed in assignment.toml):")
    for p in created:
        print(f"  {p.relative_to(course)}")
    print("\nNext: write the statement, stub, reference and public tests; replace the placeholder hidden test;\n"
          "rename and write the alternative and the mutant (add more); then run\n"
          f"  torchgrader validate {args.assignment} --exercise {args.exercise}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id (created when it does not exist)")
    p.add_argument("exercise", help="new exercise id: lowercase letters, digits, underscores")
    p.add_argument("--points", type=float, default=10, help="the exercise's points (default: %(default)s)")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="torchgrader new", description=__doc__)
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        return cmd_new(args)
    except AssignmentError as e:
        print(f"new: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
