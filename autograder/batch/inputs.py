"""Stage 0 of a batch: turn what a TA hands over into one submission per student.

Accepted: notebooks and ``.py`` files, folders of them (searched recursively),
zip archives as LMS bulk downloads produce them (Canvas, Moodle, Blackboard,
Brightspace), and nbgrader's ``submitted/<student>/<assignment>/`` layout.

Each file gets a stable student id, from the layout (nbgrader, a folder per
student) or from the file name (the LMS patterns below, else the file stem).
When a student has several files, the newest counts (the LMS timestamp or
resubmission number when the name carries one, else the modification time)
and the others are listed as superseded. Anything unreadable is reported and
skipped, never fatal. Nothing here writes to the inputs: archives are
extracted into a private temporary folder, refusing entries that would land
outside it (zip-slip), links, and archives that expand too far (zip bombs).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from autograder.load import SUBMISSION_SUFFIXES

ARCHIVE_SUFFIXES = (".zip",)
SKIP_DIRS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git", ".venv", "node_modules"}


@dataclass
class ArchiveLimits:
    """What one archive may expand to."""

    max_entries: int = 50_000
    max_file_bytes: int = 256 * 2**20
    max_total_bytes: int = 4 * 2**30
    max_depth: int = 2  # archives inside archives (students zip their work too)


@dataclass
class Entry:
    """One submission file, ready to read."""

    path: Path  # a readable local file (inside the extraction folder for archive entries)
    source: str  # where it came from, as the TA knows it: "subs/alice.ipynb", "canvas.zip:smith_1_2_hw.ipynb"
    submission: str  # the gradebook's `submission` column: the path under its root, without the suffix
    student: str  # stable student id
    sha256: str
    order: tuple  # newer sorts later: (timestamp, resubmission number, name)
    how: str = "file name"  # how the student id was found: "nbgrader layout", "canvas", "folder", ...
    nbgrader_assignment: str = ""  # the <assignment> folder of nbgrader's layout
    timestamp: float = 0.0  # seconds since the epoch: the LMS's, else the file's mtime


@dataclass
class Inputs:
    entries: list[Entry] = field(default_factory=list)  # one per student: the newest
    superseded: list[tuple[Entry, Entry]] = field(default_factory=list)  # (older, the one that counts)
    problems: list[str] = field(default_factory=list)  # unreadable inputs, each "what: why"
    ignored: list[str] = field(default_factory=list)  # files that are not submissions (PDFs, LMS metadata)


# ---------------------------------------------------------------------- student ids
def slug(name: str) -> str:
    """A person's name as a stable id: ascii, lower case, words joined by `_`."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", folded.lower()).strip("_") or "unknown"


def _clean_id(s: str) -> str:
    """An id as given (usernames are case-sensitive in nbgrader), made safe as a folder name."""
    s = re.sub(r"[^\w.@+-]+", "_", s.strip(), flags=re.ASCII).strip("._")
    return s or "unknown"


_CANVAS = re.compile(r"^(?P<student>[a-z0-9-]+?)(?:_late)?_(?P<uid>\d+)_(?P<fid>\d+)_(?P<orig>.+)$", re.I)
_MOODLE = re.compile(r"^(?P<student>.+?)_(?P<pid>\d+)_assignsubmission_[a-z]+_(?P<orig>.*)$", re.I)
_BLACKBOARD = re.compile(
    r"^(?P<assignment>.+)_(?P<student>[^_]+)_attempt_(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<orig>.+))?$")
_BRIGHTSPACE = re.compile(
    r"^(?P<ids>\d+-\d+) - (?P<student>.+?) ?- (?P<ts>[A-Z][a-z]{2} \d{1,2}, \d{4} \d{3,4} [AP]M)(?: - (?P<orig>.+))?$")
_RESUBMITTED = re.compile(r"-(\d+)$")  # Canvas appends -1, -2 to a file uploaded again


@dataclass
class NameInfo:
    student: str
    how: str
    timestamp: float | None = None
    seq: int = 0


def parse_name(name: str) -> NameInfo | None:
    """Student id (and date, when given) from an LMS bulk-download name; None for a plain name.

    ``name`` is a file stem or a folder name.
    """
    m = _BLACKBOARD.match(name)
    if m:
        ts = datetime.strptime(m["ts"], "%Y-%m-%d-%H-%M-%S").timestamp()
        return NameInfo(_clean_id(m["student"]), "blackboard", ts)
    m = _BRIGHTSPACE.match(name)
    if m:
        try:
            ts = datetime.strptime(m["ts"], "%b %d, %Y %I%M %p").timestamp()
        except ValueError:
            ts = None
        return NameInfo(slug(m["student"]), "brightspace", ts)
    m = _MOODLE.match(name)
    if m:
        return NameInfo(slug(m["student"]), "moodle")
    m = _CANVAS.match(name)
    if m:
        r = _RESUBMITTED.search(m["orig"])
        # the file id grows with every upload, so it orders a student's files too
        return NameInfo(_clean_id(m["student"]).lower(), "canvas", None, int(m["fid"]) * 1000 + (int(r[1]) if r else 0))
    return None


def identify(parts: tuple[str, ...], nbgrader: bool) -> NameInfo:
    """The student of a file at ``parts`` (its path under the input root, or the archive's root)."""
    stem = PurePosixPath(parts[-1]).stem
    if nbgrader:  # submitted/<student>/<assignment>/<notebook>
        return NameInfo(_clean_id(parts[-3]), "nbgrader layout")
    by_name = parse_name(stem)
    if by_name is not None:
        return by_name
    if len(parts) > 1:  # a folder per student: its name (maybe an LMS folder name) is the student
        by_folder = parse_name(parts[0].rstrip("_"))
        return by_folder or NameInfo(_clean_id(parts[0]), "folder")
    return NameInfo(_clean_id(stem), "file name")


# ---------------------------------------------------------------------- discovery
@dataclass
class _Found:
    path: Path
    source: str
    parts: tuple[str, ...]  # path under the root, for identification
    mtime: float
    nbgrader: bool
    nbgrader_assignment: str = ""


def _is_submission(name: str) -> bool:
    return name.lower().endswith(SUBMISSION_SUFFIXES) and not name.startswith((".", "~$"))


def _is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES) and not name.startswith(".")


def _metadata(name: str) -> bool:
    """LMS side files that come with every download: not worth a line in the report."""
    return name.lower().endswith((".txt", ".yml", ".yaml", ".html", ".json")) or name.startswith(".")


def _nbgrader_parts(abs_parts: tuple[str, ...]) -> bool:
    return len(abs_parts) >= 4 and abs_parts[-4] == "submitted"


def _strip_common(found: list[_Found]) -> None:
    """Drop folders that wrap everything (a zip of one folder, a copied parent folder).

    With a single file the folder may as well be the student's: it is kept.
    """
    plain = [f for f in found if not f.nbgrader]
    if len(plain) < 2:
        return
    while all(len(f.parts) > 1 for f in plain) and len({f.parts[0] for f in plain}) == 1:
        for f in plain:
            f.parts = f.parts[1:]


class Expander:
    def __init__(self, workdir: Path, limits: ArchiveLimits, exclude: list[Path], assignment: str | None) -> None:
        self.workdir = workdir
        self.limits = limits
        self.exclude = [p.resolve() for p in exclude]
        self.assignment = assignment
        self.out = Inputs()
        self._archives = 0

    # -------------------------------------------------------------- folders
    def folder(self, root: Path, label: str) -> list[_Found]:
        found: list[_Found] = []
        root_abs = root.resolve()
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: self.out.problems.append(
                f"{e.filename}: could not be listed ({e.strerror})")):
            d = Path(dirpath)
            dirnames[:] = sorted(n for n in dirnames if n not in SKIP_DIRS and not n.startswith(".")
                                 and (d / n).resolve() not in self.exclude)
            for name in sorted(filenames):
                p = d / name
                rel = p.relative_to(root)
                src = f"{label}/{rel.as_posix()}" if label else rel.as_posix()
                if _is_archive(name):
                    found += self._prefixed(self.archive(p, src, depth=0), rel.parts)
                    continue
                if not _is_submission(name):
                    if not _metadata(name):
                        self.out.ignored.append(f"{src}: not a notebook or .py file")
                    continue
                try:
                    st = p.stat()
                except OSError as e:
                    self.out.problems.append(f"{src}: could not be read ({e.strerror})")
                    continue
                if not stat.S_ISREG(st.st_mode):
                    self.out.problems.append(f"{src}: not a regular file")
                    continue
                abs_parts = (root_abs / rel).parts
                nbg = _nbgrader_parts(abs_parts)
                mtime = _nbgrader_timestamp(p.parent) if nbg else None
                found.append(_Found(p, src, rel.parts, mtime or st.st_mtime, nbg, abs_parts[-2] if nbg else ""))
        return found

    @staticmethod
    def _prefixed(found: list[_Found], archive_parts: tuple[str, ...]) -> list[_Found]:
        """Entries of an archive found at ``archive_parts``: the archive counts as a folder named by its stem."""
        head = archive_parts[:-1] + (PurePosixPath(archive_parts[-1]).stem,)
        for f in found:
            if not f.nbgrader:
                f.parts = head + f.parts
        return found

    # -------------------------------------------------------------- archives
    def archive(self, path: Path, source: str, depth: int) -> list[_Found]:
        try:
            with zipfile.ZipFile(path) as z:
                return self._extract(z, source, depth)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as e:
            self.out.problems.append(f"{source}: not a readable zip archive ({e})")
            return []

    def _extract(self, z: zipfile.ZipFile, source: str, depth: int) -> list[_Found]:
        lim = self.limits
        infos = z.infolist()
        if len(infos) > lim.max_entries:
            self.out.problems.append(f"{source}: {len(infos)} entries, more than the {lim.max_entries} allowed")
            return []
        declared = sum(i.file_size for i in infos if not i.is_dir())
        if declared > lim.max_total_bytes:
            self.out.problems.append(f"{source}: expands to {_size(declared)}, more than the "
                                     f"{_size(lim.max_total_bytes)} allowed (a zip bomb?)")
            return []
        self._archives += 1
        dest = self.workdir / f"a{self._archives}"
        dest.mkdir(mode=0o700)
        found: list[_Found] = []
        written = 0
        for info in infos:
            name = info.filename.replace("\\", "/")
            where = f"{source}:{name}"
            if info.is_dir():
                continue
            pure = PurePosixPath(name)
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in pure.parts:
                self.out.problems.append(f"{where}: refused, its path leaves the archive (zip-slip)")
                continue
            parts = tuple(p for p in pure.parts if p not in ("", "."))
            if not parts or any(p in SKIP_DIRS or p.startswith(".") for p in parts[:-1]):
                continue
            base = parts[-1]
            if stat.S_ISLNK(info.external_attr >> 16):
                self.out.problems.append(f"{where}: refused, a symbolic link")
                continue
            archive = _is_archive(base)
            if not (_is_submission(base) or archive):
                if not _metadata(base):
                    self.out.ignored.append(f"{where}: not a notebook or .py file")
                continue
            if archive and depth + 1 > lim.max_depth:
                self.out.problems.append(f"{where}: archives nested too deep")
                continue
            if info.file_size > lim.max_file_bytes:
                self.out.problems.append(f"{where}: {_size(info.file_size)}, more than the "
                                         f"{_size(lim.max_file_bytes)} allowed for one file")
                continue
            target = dest.joinpath(*parts)
            if not target.resolve().is_relative_to(dest.resolve()):
                self.out.problems.append(f"{where}: refused, its path leaves the archive (zip-slip)")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                size = self._copy(z, info, target, written)
            except _TooBig as e:
                self.out.problems.append(f"{where}: {e} (a zip bomb?); the rest of {source} was skipped")
                target.unlink(missing_ok=True)
                break
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as e:
                self.out.problems.append(f"{where}: could not be extracted ({e})")
                target.unlink(missing_ok=True)
                continue
            written += size
            if archive:
                found += self._prefixed(self.archive(target, where, depth + 1), parts)
                continue
            try:
                mtime = datetime(*info.date_time).timestamp()
            except ValueError:
                mtime = 0.0
            nbg = _nbgrader_parts(parts)
            found.append(_Found(target, where, parts, mtime, nbg, parts[-2] if nbg else ""))
        _strip_common(found)
        return found

    def _copy(self, z: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, written: int) -> int:
        """Stream one entry out, counting bytes: declared sizes may lie."""
        lim = self.limits
        size = 0
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out, z.open(info) as src:
            while chunk := src.read(1 << 20):
                size += len(chunk)
                if size > lim.max_file_bytes:
                    raise _TooBig(f"more than {_size(lim.max_file_bytes)} once extracted")
                if written + size > lim.max_total_bytes:
                    raise _TooBig(f"the archive expands past {_size(lim.max_total_bytes)}")
                out.write(chunk)
        return size

    # -------------------------------------------------------------- all together
    def expand(self, paths: list[str | Path]) -> Inputs:
        found: list[_Found] = []
        for given in paths:
            p = Path(given)
            label = str(given).rstrip("/") or "/"
            if p.is_dir():
                here = self.folder(p, label)
                if not here:
                    self.out.problems.append(f"{label}: no notebooks, .py files or zip archives in this folder")
                _strip_common(here)
                found += here
            elif p.is_file() and _is_archive(p.name):
                found += self.archive(p, label, depth=0)
            elif p.is_file():
                if not _is_submission(p.name):
                    self.out.problems.append(f"{label}: not a notebook (.ipynb), .py file or zip archive")
                    continue
                abs_parts = p.resolve().parts
                nbg = _nbgrader_parts(abs_parts)
                try:
                    mtime = p.stat().st_mtime
                except OSError as e:
                    self.out.problems.append(f"{label}: could not be read ({e.strerror})")
                    continue
                found.append(_Found(p, label, abs_parts[-3:] if nbg else (p.name,), mtime, nbg,
                                    abs_parts[-2] if nbg else ""))
            elif p.exists():
                self.out.problems.append(f"{label}: not a regular file or folder")
            else:
                self.out.problems.append(f"{label}: no such file or folder")
        found = self._only_this_assignment(found)
        entries = []
        for f in found:
            try:
                digest = _sha256(f.path)
            except OSError as e:
                self.out.problems.append(f"{f.source}: could not be read ({e.strerror})")
                continue
            info = identify(f.parts, f.nbgrader)
            ts = info.timestamp if info.timestamp is not None else f.mtime
            sub = "/".join(f.parts[:-1] + (PurePosixPath(f.parts[-1]).stem,))
            entries.append(Entry(path=f.path, source=f.source, submission=sub, student=info.student, sha256=digest,
                                 order=(ts, info.seq, f.source), how=info.how,
                                 nbgrader_assignment=f.nbgrader_assignment, timestamp=ts))
        self._newest(entries)
        return self.out

    def _only_this_assignment(self, found: list[_Found]) -> list[_Found]:
        """In nbgrader's layout, keep the folders of this assignment when there are several."""
        names = {f.nbgrader_assignment for f in found if f.nbgrader}
        if self.assignment and len(names) > 1 and self.assignment in names:
            dropped = [f for f in found if f.nbgrader and f.nbgrader_assignment != self.assignment]
            for f in dropped:
                self.out.ignored.append(f"{f.source}: another assignment ({f.nbgrader_assignment})")
            return [f for f in found if f not in dropped]
        return found

    def _newest(self, entries: list[Entry]) -> None:
        by_student: dict[str, list[Entry]] = {}
        for e in entries:
            by_student.setdefault(e.student, []).append(e)
        for student in sorted(by_student):
            group = sorted(by_student[student], key=lambda e: e.order)
            newest = group[-1]
            self.out.entries.append(newest)
            self.out.superseded += [(old, newest) for old in group[:-1]]


class _TooBig(Exception):
    pass


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _nbgrader_timestamp(folder: Path) -> float | None:
    """nbgrader's ``timestamp.txt`` beside a submitted notebook ("2024-01-31 12:34:56.789 UTC")."""
    try:
        text = (folder / "timestamp.txt").read_text().strip().removesuffix("UTC").strip()
        ts = datetime.fromisoformat(text)
        return (ts if ts.tzinfo else ts.replace(tzinfo=UTC)).timestamp()
    except (OSError, ValueError):
        return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def private_tempdir(kind: str) -> Path:
    """A 0700 temporary folder named after this process; those of dead processes are removed first.

    A batch or worker killed with SIGKILL cannot clean up after itself: the
    next one does.
    """
    base = Path(tempfile.gettempdir())
    for old in base.glob(f"torchgrader-{kind}-*-*"):
        try:
            pid = int(old.name.split("-")[2])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except (ValueError, IndexError, PermissionError):
            pass
    path = Path(tempfile.mkdtemp(prefix=f"torchgrader-{kind}-{os.getpid()}-"))
    os.chmod(path, 0o700)
    return path


class Workspace:
    """A private temporary folder for extracted archives, removed on exit."""

    def __init__(self) -> None:
        self.path = private_tempdir("inputs")

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def expand(paths: list[str | Path], workdir: Path, *, limits: ArchiveLimits | None = None,
           exclude: list[Path] | None = None, assignment: str | None = None) -> Inputs:
    """Every submission under ``paths``, one per student; archives are extracted into ``workdir``."""
    return Expander(workdir, limits or ArchiveLimits(), exclude or [], assignment).expand(paths)
