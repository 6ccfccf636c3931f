"""Proof that an assignment's current material passed ``validate``: what ``release`` asks for.

A passing ``validate`` records a pass for each exercise it validated, in
``solutions/<id>/.torchgrader-validated.json``: a digest of that exercise's
files (``assignments/<id>/<ex>/`` and ``solutions/<id>/<ex>/``), of the files
the exercises share (any other file of the assignment but ``assignment.toml``,
whose title and order change no grade) and of the engine (the ``autograder``
package's own source, and torch's version, which the HOWTO pins). ``validate --exercise X``
records X's pass; a whole
validate records every exercise's. A pass stays valid while all three digests
are unchanged, so after one exercise is added or edited, release needs only
that exercise validated again (``validate ASSIGNMENT --exercise X``), not all
of them. What crosses exercises is checked every time: every validate grades
the all-references submission on every suite, and release reruns the static
checks (names two exercises define, names a suite asks for that no reference
defines). A copy of the assignment (``torchgrader new ID --from OTHER``) starts
without the record.
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import cache
from pathlib import Path

from autograder.assignment import ASSIGNMENT_TOML, CourseDir, material_files
from autograder.report.files import write_atomic

STAMP = ".torchgrader-validated.json"


def stamp_path(course: Path, assignment_id: str) -> Path:
    return CourseDir(Path(course)).hidden(assignment_id) / STAMP


def _digest(files: list[tuple[Path, str, Path]]) -> str:
    h = hashlib.sha256()
    for p, side, rel in files:
        h.update(f"{side}/{rel.as_posix()}\0".encode())
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def material_digest(course: Path, assignment_id: str) -> str:
    """sha256 over every file of the assignment (names and bytes); the stamp, a dot-file, is not material."""
    return _digest(material_files(course, assignment_id))


def exercise_digests(course: Path, assignment_id: str, ids: list[str]) -> tuple[dict[str, str], str]:
    """(each exercise's digest over its own two folders, the digest of the files the exercises share)."""
    files = material_files(course, assignment_id)
    mine: dict[str, list[tuple[Path, str, Path]]] = {ex: [] for ex in ids}
    shared = []
    for f in files:
        top = f[2].parts[0] if f[2].parts else ""
        if top in mine and len(f[2].parts) > 1:
            mine[top].append(f)
        elif f[2].as_posix() != ASSIGNMENT_TOML:
            shared.append(f)
    return {ex: _digest(fs) for ex, fs in mine.items()}, _digest(shared)


@cache
def engine_digest() -> str:
    """sha256 over the grader's own source and torch's version: a pass is of material *and* what graded it."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"torch {torch_version()}\0".encode())  # the suites are validated against one torch
    for p in sorted(root.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def torch_version() -> str:
    """The installed torch's version without its local tag (``2.13.0+cpu`` -> ``2.13.0``), read without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch").split("+")[0]
    except PackageNotFoundError:
        return "none"


def _ids(course: Path, assignment_id: str) -> list[str]:
    return CourseDir(Path(course)).listed_exercises(assignment_id) or []


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_stamp(course: Path, assignment_id: str, mode: str, exercises: list[str] | None = None) -> Path:
    """Record a pass of ``exercises`` (all of the assignment's when None), keeping the other exercises' passes."""
    path = stamp_path(course, assignment_id)
    ids = _ids(course, assignment_id)
    digests, shared = exercise_digests(course, assignment_id, ids)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    data = _read(path)
    found = data.get("exercises")
    passes: dict = found if isinstance(found, dict) else {}
    for ex in exercises if exercises is not None else ids:
        if ex in digests:
            passes[ex] = {"digest": digests[ex], "shared": shared, "engine": engine_digest(), "mode": mode,
                          "validated_at": now}
    data["exercises"] = passes
    if exercises is None:  # a whole validate: the assignment as one, as before
        data.update({"digest": material_digest(course, assignment_id), "mode": mode, "validated_at": now})
    return write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def stale_exercises(course: Path, assignment_id: str) -> dict[str, str]:
    """The exercises without a valid pass, each with why (never validated, its files, shared files, the engine)."""
    ids = _ids(course, assignment_id)
    digests, shared = exercise_digests(course, assignment_id, ids)
    passes = _read(stamp_path(course, assignment_id)).get("exercises") or {}
    out = {}
    for ex in ids:
        p = passes.get(ex) if isinstance(passes, dict) else None
        if not isinstance(p, dict):
            out[ex] = "never validated"
        elif p.get("digest") != digests[ex]:
            out[ex] = f"changed since its pass of {p.get('validated_at', '?')}"
        elif p.get("shared") != shared:
            out[ex] = f"files the exercises share changed since its pass of {p.get('validated_at', '?')}"
        elif p.get("engine") != engine_digest():
            out[ex] = f"the grader itself changed since its pass of {p.get('validated_at', '?')}"
    return out


def validated(course: Path, assignment_id: str) -> tuple[bool, str]:
    """(whether every exercise's current material passed validate, a sentence saying so or which need it again)."""
    path = stamp_path(course, assignment_id)
    if not path.is_file():
        return False, f"{assignment_id} has not passed `torchgrader validate {assignment_id}`"
    data = _read(path)
    if "exercises" not in data and data.get("digest") == material_digest(course, assignment_id):
        return True, f"{assignment_id} passed validate at {data.get('validated_at', '?')} and is unchanged since"
    stale = stale_exercises(course, assignment_id)
    if not stale:
        return True, f"every exercise of {assignment_id} passed validate and is unchanged since"
    again = " ".join(f"--exercise {ex}" for ex in stale)
    why = "; ".join(f"{ex}: {reason}" for ex, reason in stale.items())
    return False, (f"{assignment_id} changed since it last passed validate, in {len(stale)} exercise(s) ({why}): "
                   f"run `torchgrader validate {assignment_id} {again}` (only those need validating again)")
