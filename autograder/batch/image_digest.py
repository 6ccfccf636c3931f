"""What a grader image was built from, so that a stale image is named before it grades anything.

The images bake in the grader's code and the course's grading material (docker/*/Dockerfile).
A suite fixed after the build would otherwise go on grading with the old suite. The build
records digests of both in the image (:data:`RECORD`). ``grade --backend docker`` compares the
code's with this checkout's (the material it mounts is the checkout's own); the documented
``docker run`` line mounts the checkout read-only at :data:`CHECKOUT`, and the image's
``torchgrader grade`` compares both before grading. Either says "rebuild the image: ...".
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from autograder.assignment import CourseDir
from autograder.batch import DEFAULT_IMAGE, material

RECORD = "/opt/torchgrader/material.json"  # where the images keep it (docker/*/Dockerfile)
CHECKOUT = "/checkout"  # where docker/README.md's `docker run` line mounts the course's checkout, read-only
CACHE_PARTS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


def _hash_files(pairs: list[tuple[Path, str]]) -> str:
    h = hashlib.sha256()
    for path, name in sorted(pairs, key=lambda p: p[1]):
        h.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def code_digest(package: Path) -> str:
    """The grader's own source: every ``.py`` file of the ``autograder`` package (what an install copies)."""
    pairs = [(p, p.relative_to(package).as_posix()) for p in Path(package).rglob("*.py")
             if p.is_file() and not CACHE_PARTS & set(p.relative_to(package).parts)]
    return _hash_files(pairs)


def own_package() -> Path:
    import autograder

    return Path(autograder.__file__).resolve().parent


def assignment_digest(course: Path, assignment: str) -> str:
    """The grading material of one assignment (what ``--backend docker`` mounts, what the image bakes in)."""
    return _hash_files(material.files(Path(course), assignment))


def describe(course: Path, package: Path) -> dict:
    public = CourseDir(Path(course)).public()
    assignments = sorted(p.name for p in public.iterdir() if p.is_dir()
                         and not p.name.startswith(".")) if public.is_dir() else []
    return {"code": code_digest(package),
            "assignments": {a: assignment_digest(course, a) for a in assignments}}


def staleness(recorded: dict, course: Path, assignment: str, package: Path | None, *, material_too: bool) -> list[str]:
    """What of the checkout is newer than the image (empty: the image is current); ``package``: None, not compared."""
    out = []
    if package is not None and recorded.get("code") != code_digest(Path(package)):
        out.append("the grader's code (autograder/)")
    if material_too and recorded.get("assignments", {}).get(assignment) != assignment_digest(course, assignment):
        out.append(f"the grading material of {assignment!r} (assignments/, solutions/)")
    return out


def rebuild_hint(image: str) -> str:
    which = "gpu" if any(k in image.rsplit("/", 1)[-1] for k in ("gpu", "cuda")) else "cpu"
    return f"rebuild the image: docker build --network host -f docker/{which}/Dockerfile -t {image} ."


def read_record(path: str = RECORD) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def stale_image_problem(assignment: str, image: str | None = None) -> str | None:
    """Inside an image: why its baked-in course must not grade (the mounted checkout is newer), or None.

    Only where the image has its record and the checkout is mounted at :data:`CHECKOUT`
    (docker/README.md's line does both); anywhere else there is nothing to compare.
    """
    recorded = read_record()
    checkout = Path(CHECKOUT)
    if recorded is None or not checkout.exists():
        return None
    if not os.access(checkout, os.R_OK | os.X_OK) or not CourseDir(checkout).exists():
        return (f"the course's checkout mounted at {CHECKOUT} cannot be read by the image's judge user (uid "
                f"{os.getuid()}), or has no assignments/: mount the checkout the image was built from, readable "
                "by all (`chmod a+rX` on it and its parents), so that the image can tell whether it is current")
    code = checkout / "autograder"
    try:
        newer = staleness(recorded, checkout, assignment, code if (code / "__init__.py").is_file() else None,
                          material_too=True)
    except OSError as e:
        return (f"the course's checkout mounted at {CHECKOUT} cannot be read by the image's judge user "
                f"({e.strerror}: {e.filename}): make it readable (`chmod -R a+rX assignments solutions autograder`) "
                "so that the image can tell whether it is current")
    if not newer:
        return None
    image = image or os.environ.get("TORCHGRADER_IMAGE", DEFAULT_IMAGE)  # the images set it (Dockerfile)
    return (f"the course's checkout ({CHECKOUT}) is newer than this image: {' and '.join(newer)} changed since "
            f"the image was built, and grading would use the old ones. {rebuild_hint(image)}")


def main(argv: list[str]) -> None:
    """``python -m autograder.batch.image_digest COURSE PACKAGE``: the record the image build stores."""
    course, package = argv
    print(json.dumps(describe(Path(course), Path(package)), sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
