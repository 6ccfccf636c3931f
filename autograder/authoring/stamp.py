"""Proof that an assignment's current material passed ``validate``: what ``release`` asks for.

A passing full ``validate`` (every exercise, grading included) writes a stamp
holding a digest of every file of the assignment (``assignments/<id>/`` and
``solutions/<id>/``). ``release`` recomputes the digest: any change since
(a test edited, a mutant added, a title fixed) means the release is of
material nobody validated, and it is refused unless staff override it.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from autograder.assignment import material_files
from autograder.report.files import write_atomic

STAMP = ".torchgrader-validated.json"


def stamp_path(course: Path, assignment_id: str) -> Path:
    return Path(course) / "solutions" / assignment_id / STAMP


def material_digest(course: Path, assignment_id: str) -> str:
    """sha256 over every file of the assignment (names and bytes); the stamp, a dot-file, is not material."""
    h = hashlib.sha256()
    for p, side, rel in material_files(course, assignment_id):
        h.update(f"{side}/{rel.as_posix()}\0".encode())
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def write_stamp(course: Path, assignment_id: str, mode: str) -> Path:
    path = stamp_path(course, assignment_id)
    data = {
        "digest": material_digest(course, assignment_id),
        "mode": mode,
        "validated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    return write_atomic(path, json.dumps(data, indent=1) + "\n")


def validated(course: Path, assignment_id: str) -> tuple[bool, str]:
    """(whether the current material passed validate, a sentence saying so or why not)."""
    path = stamp_path(course, assignment_id)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False, f"{assignment_id} has not passed `torchgrader validate {assignment_id}`"
    if data.get("digest") != material_digest(course, assignment_id):
        return False, (
            f"{assignment_id} changed since it last passed validate ({data.get('validated_at', '?')}): "
            f"run `torchgrader validate {assignment_id}` again"
        )
    return True, f"{assignment_id} passed validate at {data.get('validated_at', '?')} and is unchanged since"
