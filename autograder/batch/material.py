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

from autograder.assignment import material_files


def files(course: Path, assignment: str) -> list[tuple[Path, str]]:
    """(file, path inside the material) for everything a worker needs, sorted."""
    return [(p, f"{side}/{assignment}/{rel.as_posix()}")
            for p, side, rel in material_files(course, assignment, grading_only=True)]


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
