"""What a grading worker elsewhere needs of the course: the public side, the hidden suites, probes and data.

Workers in containers (``--backend docker``) and on other machines
(``--backend dask``) get only this, never the references, correct
alternatives or mutants: grading does not use them, and a copy that is not
made cannot leak. The same selection makes the Gradescope autograder.

The packed form is deterministic (sorted entries, fixed times, owners and
modes, no gzip timestamp), so the same material always has the same bytes:
Dask keys it by content, and a batch reuses the judges and the extracted
folder of the previous batch instead of leaving them behind.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
from pathlib import Path

# Staff-only files that take no part in grading.
NOT_FOR_GRADING = ("reference.py", "alternatives", "mutants")
SKIPPED = ("__pycache__", ".ipynb_checkpoints")


def files(course: Path, assignment: str) -> list[tuple[Path, str]]:
    """(file, path inside the material) for everything a worker needs, sorted."""
    out: list[tuple[Path, str]] = []
    for part in ("assignments", "solutions"):
        top = Path(course) / part / assignment
        if not top.is_dir():
            continue
        for p in sorted(top.rglob("*")):
            rel = p.relative_to(top)
            if any(x in SKIPPED or x.startswith(".") for x in rel.parts) or p.suffix == ".pyc":
                continue
            if part == "solutions" and any(x in NOT_FOR_GRADING for x in rel.parts):
                continue
            if p.is_file() and not p.is_symlink():
                out.append((p, f"{part}/{assignment}/{rel.as_posix()}"))
    return out


def stage(course: Path, assignment: str, dest: Path) -> Path:
    """Copy the material into ``dest`` (a course folder: assignments/, solutions/); returns ``dest``."""
    dest = Path(dest)
    for src, arc in files(course, assignment):
        target = dest / arc
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return dest


def pack(course: Path, assignment: str) -> bytes:
    """The material as a tar.gz whose bytes depend on the files' contents and names only."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for src, arc in files(course, assignment):
            info = tarfile.TarInfo(arc)
            data = src.read_bytes()
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give a staged folder to the uid a container runs as (only root may)."""
    for p in [path, *Path(path).rglob("*")]:
        os.chown(p, uid, gid, follow_symlinks=False)
