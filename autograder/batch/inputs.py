"""The batch's first step, ``inputs`` (see ``runner.py``): what a TA hands over becomes one submission per student.

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
outside it (zip-slip), links, and archives that expand too far (zip bombs):
one budget of bytes and entries per top-level upload, counting every level of
archives inside it. A symbolic link in a folder is never followed (``lstat``):
it is reported, like every refused input, in ``inputs.csv``; so is a file over
the size limit. A Moodle name that parses more than one way (a full name can
be edited to look like ``Bob Smith_777_assignsubmission_file``) is graded on
an id of its own, never merged with another student, and flagged.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
import tempfile
import unicodedata
import zipfile
import zlib
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
class _Budget:
    """What one top-level upload may still expand to: every level of nested archives draws on it."""

    bytes_left: int
    entries_left: int


@dataclass
class Entry:
    """One submission file, ready to read."""

    path: Path  # the bytes hashed, staged in the private work folder: what is graded (never re-read from the input)
    source: str  # where it came from, as the TA knows it: "subs/alice.ipynb", "canvas.zip:smith_1_2_hw.ipynb"
    submission: str  # the gradebook's `submission` column: the path under its root, without the suffix
    student: str  # stable student id
    sha256: str
    order: tuple  # newer sorts later: (timestamp, resubmission number, name)
    how: str = "file name"  # how the student id was found: "nbgrader layout", "canvas", "folder", ...
    nbgrader_assignment: str = ""  # the <assignment> folder of nbgrader's layout
    timestamp: float = 0.0  # seconds since the epoch: the LMS's, else the file's mtime
    name: str = ""  # the person's name as the LMS gives it (display only; ``student`` is the unique id)
    detail: str = ""  # what the LMS's name said (user id, attempt, late), for inputs.csv
    late: str = ""  # how the LMS marked the file late ("" when it did not): flagged for the TA
    claims: list[str] = field(default_factory=list)  # inner names that claimed another student (ignored)
    origin: Path | None = None  # where the file was found, when it was staged from outside the work folder


@dataclass
class Inputs:
    entries: list[Entry] = field(default_factory=list)  # one per student: the newest
    superseded: list[tuple[Entry, Entry]] = field(default_factory=list)  # (older, the one that counts)
    why: dict[str, str] = field(default_factory=dict)  # superseded entry's source -> why the other counts
    notes: list[str] = field(default_factory=list)  # choices a TA should know of, each "what: why"
    problems: list[str] = field(default_factory=list)  # unreadable inputs, each "what: why"
    ignored: list[str] = field(default_factory=list)  # files that are not submissions (PDFs, LMS metadata)


# ---------------------------------------------------------------------- student ids
def slug(name: str) -> str:
    """A person's name as a stable id: lower case, words joined by `_`, letters of every script kept."""
    folded = unicodedata.normalize("NFC", name).casefold()
    return re.sub(r"[\W_]+", "_", folded).strip("_") or "unknown"


def _clean_id(s: str) -> str:
    """An id as given (usernames are case-sensitive in nbgrader), made safe as a folder name."""
    s = re.sub(r"[^\w.@+-]+", "_", unicodedata.normalize("NFC", s).strip()).strip("._")
    return s or "unknown"


# The names each LMS gives the files of its bulk download. Only the LMS-written prefix identifies the
# student: the rest (``orig``) is the file name the student chose, and is never trusted.
# Canvas: <lastfirst>[_LATE]_<user id>_<attachment id>_<file name>, "-1", "-2" appended to a name uploaded again
_CANVAS = re.compile(r"^(?P<student>[^_\s]+?)(?:_(?P<late>late))?_(?P<uid>\d+)_(?P<fid>\d+)_(?P<orig>.+)$", re.I)
# Moodle: <Full Name>_<participant id>_assignsubmission_<plugin>_<file name>, or that prefix as a folder
# (ending in "_") holding the files ("Download submissions in folders")
_MOODLE = re.compile(r"^(?P<student>.+?)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<orig>.*))?$", re.I)
# Blackboard: <assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>[_<file name>]; the first match from the left,
# so a file name that itself looks like an attempt never decides the student or the date
_BLACKBOARD = re.compile(
    r"^(?P<assignment>.+?)_(?P<student>[^_]+)_attempt_(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<orig>.+))?$")
# Brightspace: <submission id>-<file id> - <Full Name> - <Mon D, YYYY HMM AM> [- <file name>], as a file or folder
_BRIGHTSPACE = re.compile(
    r"^(?P<sid>\d+)-(?P<fid>\d+) - (?P<student>.+?) ?- (?P<ts>[A-Z][a-z]{2} \d{1,2}, \d{4} \d{3,4} [AP]M)"
    r"(?: - (?P<orig>.+))?$")
_RESUBMITTED = re.compile(r"-(\d+)$")  # Canvas appends -1, -2 to a file uploaded again


@dataclass
class NameInfo:
    student: str  # the unique id: it carries the LMS's own user id where the LMS writes one
    how: str
    timestamp: float | None = None  # the LMS's date of the attempt (Blackboard, Brightspace)
    seq: int = 0  # the LMS's own upload order (Canvas: attachment id and resubmission number)
    name: str = ""  # the person's name, for display
    orig: str = ""  # the file name the student chose (never trusted)
    detail: str = ""  # how the LMS identified them, for inputs.csv
    late: str = ""  # how the LMS marked the file late ("" when it did not)


def parse_name(name: str) -> NameInfo | None:
    """Student id (and date, when given) from an LMS bulk-download name; None for a plain name.

    ``name`` is a file stem or a folder name.
    """
    ts: float | None
    name = unicodedata.normalize("NFC", name)
    m = _BLACKBOARD.match(name)
    if m:
        ts = datetime.strptime(m["ts"], "%Y-%m-%d-%H-%M-%S").timestamp()
        return NameInfo(_clean_id(m["student"]), "blackboard", ts, name=m["student"], orig=m["orig"] or "",
                        detail=f"username {m['student']}, attempt {m['ts']}")
    m = _BRIGHTSPACE.match(name)
    if m:
        try:
            ts = datetime.strptime(m["ts"], "%b %d, %Y %I%M %p").timestamp()
        except ValueError:
            ts = None
        # Brightspace's names carry submission and file ids, no user id: the name is all there is.
        return NameInfo(slug(m["student"]), "brightspace", ts, name=m["student"], orig=m["orig"] or "",
                        detail=f"submission {m['sid']} of {m['ts']}")
    m = _MOODLE.match(name)
    if m:
        readings = _moodle_readings(name)
        if len(readings) > 1:
            return _ambiguous_moodle(name, readings)
        return NameInfo(f"{slug(m['student'])}_{m['pid']}", "moodle", name=m["student"], orig=m["orig"] or "",
                        detail=f"participant id {m['pid']}")
    m = _CANVAS.match(name)
    if m:
        r = _RESUBMITTED.search(m["orig"])
        # the attachment id grows with every upload, so it orders a student's files
        seq = int(m["fid"]) * 1000 + (int(r[1]) if r else 0)
        late = ", late" if m["late"] else ""
        return NameInfo(f"{m['student'].casefold()}_{m['uid']}", "canvas", None, seq, name=m["student"],
                        orig=m["orig"], detail=f"user id {m['uid']}, file {m['fid']}{late}"
                        + (f", upload -{r[1]}" if r else ""), late="Canvas marked the file LATE" if late else "")
    return None


_MOODLE_MARK = re.compile(r"_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?=_|$)", re.I)
AMBIGUOUS = "ambiguous Moodle name"  # NameInfo.how of a name that parses more than one way


def _moodle_readings(name: str) -> list[tuple[str, str]]:
    """Every (full name, participant id) that Moodle's pattern allows for ``name``.

    Moodle writes ``<full name>_<id>_assignsubmission_<plugin>_<file name>``, and both the full name
    (a profile field) and the file name are the student's: each may carry the marker too.
    """
    return [(name[:m.start()], m["pid"]) for m in _MOODLE_MARK.finditer(name) if m.start() > 0]


def _ambiguous_moodle(name: str, readings: list[tuple[str, str]]) -> NameInfo:
    """A Moodle name with several readings: an id no other name can produce (so it is never merged), flagged."""
    digest = hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()[:10]
    said = "; ".join(f"{who!r} (participant id {pid})" for who, pid in readings)
    return NameInfo(f"ambiguous-moodle-{digest}", AMBIGUOUS, name=name,
                    detail=f"parses {len(readings)} ways: {said}")


@dataclass
class Identity:
    info: NameInfo
    claims: list[str] = field(default_factory=list)  # inner names that claim another student


def identify(parts: tuple[str, ...], nbgrader: bool, grouping: int = 0) -> Identity:
    """The student of a file at ``parts`` (its path under the input root, or the archive's root).

    Only the outermost name decides: the first LMS-written name or, where there is none, the
    outermost folder (a folder per student) or the file's own name. ``grouping`` outer folders are a
    TA's grouping (sections, a download folder) and are skipped. Everything below the deciding part
    belongs to that student, whatever its name says; an inner name that claims another student is
    reported in ``claims``, never obeyed.
    """
    if nbgrader:  # submitted/<student>/<assignment>/<notebook>
        return Identity(NameInfo(_clean_id(parts[-3]), "nbgrader layout", name=parts[-3]))
    names = [PurePosixPath(p).stem if i == len(parts) - 1 else p for i, p in enumerate(parts)]
    at = min(grouping, len(names) - 1)
    info = parse_name(names[at])
    if info is None:
        last = at == len(names) - 1
        info = NameInfo(_clean_id(names[at]), "file name" if last else "folder", name=names[at])
    below = names[at + 1:] + ([PurePosixPath(info.orig).stem, info.orig] if info.orig else [])
    claims = []
    for n in below:
        other = parse_name(n)
        if other is not None and other.student != info.student:
            claims.append(f"its name {n!r} claims student {other.student} ({other.how}): ignored, it counts "
                          f"for {info.student}, the student of its {info.how} entry")
            break
    return Identity(info, claims)


# ---------------------------------------------------------------------- discovery
@dataclass
class _Found:
    path: Path
    source: str
    parts: tuple[str, ...]  # path under the root, for identification
    mtime: float  # a time no student controls: the LMS's zip entry, the file on the TA's disk, nbgrader's stamp
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

    With a single file the folder may as well be the student's: it is kept; so is a folder whose
    name the LMS wrote (one Moodle or Brightspace student with several files).
    """
    plain = [f for f in found if not f.nbgrader]
    if len(plain) < 2:
        return
    while all(len(f.parts) > 1 for f in plain) and len({f.parts[0] for f in plain}) == 1 \
            and parse_name(plain[0].parts[0]) is None:
        for f in plain:
            f.parts = f.parts[1:]


def _grouping_depth(found: list[_Found]) -> dict[int, int]:
    """How many outer plain folders of each file only group students (a TA's section folders).

    A plain folder is a student's own folder unless the names just below it are LMS names of two or
    more students: then it is a grouping folder, and identity is taken from below it.
    """
    below: dict[tuple[str, ...], set[str]] = {}  # plain folder -> LMS students named just below it
    for f in found:
        if f.nbgrader:
            continue
        for k in range(len(f.parts) - 1):
            if parse_name(f.parts[k]) is not None:
                break
            nxt = f.parts[k + 1] if k + 2 < len(f.parts) else PurePosixPath(f.parts[k + 1]).stem
            info = parse_name(nxt)
            if info is not None:
                below.setdefault(f.parts[:k + 1], set()).add(info.student)
    depth: dict[int, int] = {}
    for f in found:
        k = 0
        while not f.nbgrader and k < len(f.parts) - 1 and len(below.get(f.parts[:k + 1], ())) >= 2:
            k += 1
        depth[id(f)] = k
    return depth


def zip_name(info: zipfile.ZipInfo) -> str:
    """An entry's name as the tool that wrote the zip meant it.

    The zip format knows two encodings: UTF-8 when the entry's flag bit 11 is set, else IBM code
    page 437 (how Python's zipfile decodes it). Most LMSs write UTF-8 bytes *without* the flag:
    Canvas (rubyzip, whose ``unicode_names`` is off by default), Moodle (PHP's ZipArchive, its
    names "always kept in UTF-8"), Blackboard, and zips made on Linux or macOS; read as CP437,
    "José" becomes "Jos├⌐". So a name without the flag is read as UTF-8 when its bytes are valid
    UTF-8 (a real CP437 name almost never is), from Info-ZIP's Unicode Path extra field (0x7075,
    written by 7-Zip, WinRAR, Info-ZIP) when present, and as CP437 (the format's legacy encoding,
    what Windows' own zip folders write) otherwise.
    """
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.filename.encode("cp437", errors="replace")
    extra = info.extra or b""
    i = 0
    while i + 4 <= len(extra):
        tag, size = int.from_bytes(extra[i:i + 2], "little"), int.from_bytes(extra[i + 2:i + 4], "little")
        body = extra[i + 4:i + 4 + size]
        if tag == 0x7075 and len(body) > 5 and body[0] == 1 \
                and int.from_bytes(body[1:5], "little") == zlib.crc32(raw):
            try:
                return body[5:].decode("utf-8")
            except UnicodeDecodeError:
                break
        i += 4 + size
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return info.filename


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
        budget = _Budget(self.limits.max_total_bytes, self.limits.max_entries)
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: self.out.problems.append(
                f"{e.filename}: could not be listed ({e.strerror})")):  # followlinks=False: links not entered
            d = Path(dirpath)
            kept = []
            for n in sorted(dirnames):
                if n in SKIP_DIRS or n.startswith(".") or (d / n).resolve() in self.exclude:
                    continue
                if (d / n).is_symlink():
                    self.out.problems.append(f"{label}/{(d / n).relative_to(root).as_posix()}: {LINK_REFUSED}")
                    continue
                kept.append(n)
            dirnames[:] = kept
            for name in sorted(filenames):
                p = d / name
                rel = p.relative_to(root)
                src = f"{label}/{rel.as_posix()}" if label else rel.as_posix()
                try:
                    st = p.lstat()  # never the link's target: a link to a TA's file must not be graded
                except OSError as e:
                    self.out.problems.append(f"{src}: could not be read ({e.strerror})")
                    continue
                if stat.S_ISLNK(st.st_mode):
                    self.out.problems.append(f"{src}: {LINK_REFUSED}")
                    continue
                if _is_archive(name):
                    # a zip inside a folder is a student's own: the times inside are theirs to set
                    found += self._prefixed(self.archive(p, src, depth=0, inherit=st.st_mtime), rel.parts)
                    continue
                if not _is_submission(name):
                    if not _metadata(name):
                        self.out.ignored.append(f"{src}: not a notebook or .py file")
                    continue
                if not stat.S_ISREG(st.st_mode):
                    self.out.problems.append(f"{src}: not a regular file")
                    continue
                if not self._within(budget, st.st_size, src):
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

    def _within(self, budget: _Budget, size: int, src: str) -> bool:
        """A folder's file within the size limits (one file, and the folder's files together); else reported."""
        lim = self.limits
        if size > lim.max_file_bytes:
            self.out.problems.append(f"{src}: {_size(size)}, more than the {_size(lim.max_file_bytes)} allowed "
                                     "for one file")
            return False
        if size > budget.bytes_left or budget.entries_left <= 0:
            self.out.problems.append(f"{src}: skipped, the folder's files together pass the "
                                     f"{_size(lim.max_total_bytes)} or {lim.max_entries} files allowed")
            return False
        budget.bytes_left -= size
        budget.entries_left -= 1
        return True

    # -------------------------------------------------------------- archives
    def archive(self, path: Path, source: str, depth: int, inherit: float | None = None,
                budget: _Budget | None = None) -> list[_Found]:
        """The submissions in the zip at ``path``. ``inherit``: the time its entries get instead of
        their own, for a student's zip (whose entry times the student controls). ``budget``: what the
        top-level upload it is part of may still expand to (a fresh one for a top-level upload)."""
        if budget is None:
            budget = _Budget(self.limits.max_total_bytes, self.limits.max_entries)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    self.out.problems.append(f"{source}: not a regular file")
                    return []
                with zipfile.ZipFile(f) as z:
                    return self._extract(z, source, depth, inherit, budget)
        except OSError as e:
            if e.errno == errno.ELOOP:
                self.out.problems.append(f"{source}: {LINK_REFUSED}")
            else:
                self.out.problems.append(f"{source}: not a readable zip archive ({e})")
            return []
        except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError) as e:
            self.out.problems.append(f"{source}: not a readable zip archive ({e})")
            return []

    def _extract(self, z: zipfile.ZipFile, source: str, depth: int, inherit: float | None,
                 budget: _Budget) -> list[_Found]:
        lim = self.limits
        infos = z.infolist()
        if len(infos) > budget.entries_left:
            self.out.problems.append(f"{source}: {len(infos)} entries, more than the {lim.max_entries} allowed"
                                     + ("" if depth == 0 else " for the whole upload, its archives together"))
            return []
        budget.entries_left -= len(infos)
        declared = sum(i.file_size for i in infos if not i.is_dir())
        if declared > budget.bytes_left:
            allowed = (f"{_size(lim.max_total_bytes)} allowed" if depth == 0 else
                       f"{_size(budget.bytes_left)} its upload has left (one budget covers every archive in it)")
            self.out.problems.append(f"{source}: expands to {_size(declared)}, more than the {allowed} (a zip bomb?)")
            return []
        self._archives += 1
        dest = self.workdir / f"a{self._archives}"
        dest.mkdir(mode=0o700)
        found: list[_Found] = []
        for info in infos:
            name = zip_name(info).replace("\\", "/")
            where = f"{source}:{name}"
            parts = None if info.is_dir() else self._admit(info, name, where, depth)
            if parts is None:
                continue
            archive = _is_archive(parts[-1])
            target = dest.joinpath(*parts)
            if not target.resolve().is_relative_to(dest.resolve()):
                self.out.problems.append(f"{where}: refused, its path leaves the archive (zip-slip)")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._copy(z, info, target, budget)
            except _TooBig as e:
                self.out.problems.append(f"{where}: {e} (a zip bomb?); the rest of {source} was skipped")
                target.unlink(missing_ok=True)
                break
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as e:
                self.out.problems.append(f"{where}: could not be extracted ({e})")
                target.unlink(missing_ok=True)
                continue
            try:
                mtime = datetime(*info.date_time).timestamp() if inherit is None else inherit
            except ValueError:
                mtime = 0.0
            if archive:  # a student's zip inside the download: its files get its time, not their own
                found += self._prefixed(self.archive(target, where, depth + 1, inherit=mtime, budget=budget), parts)
                continue
            nbg = _nbgrader_parts(parts)
            found.append(_Found(target, where, parts, mtime, nbg, parts[-2] if nbg else ""))
        _strip_common(found)
        return found

    def _admit(self, info: zipfile.ZipInfo, name: str, where: str, depth: int) -> tuple[str, ...] | None:
        """The entry's path parts if it is to be extracted; None (with the reason noted, if any) if not.

        Refused, and said so: a path that leaves the archive, a symbolic link,
        archives nested too deep, a file over the size limit. Passed over: what
        is neither a submission nor an archive, and hidden or tool folders.
        """
        lim = self.limits
        pure = PurePosixPath(name)
        if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in pure.parts:
            self.out.problems.append(f"{where}: refused, its path leaves the archive (zip-slip)")
            return None
        parts = tuple(p for p in pure.parts if p not in ("", "."))
        if not parts or any(p in SKIP_DIRS or p.startswith(".") for p in parts[:-1]):
            return None
        base = parts[-1]
        if stat.S_ISLNK(info.external_attr >> 16):
            self.out.problems.append(f"{where}: refused, a symbolic link")
            return None
        archive = _is_archive(base)
        if not (_is_submission(base) or archive):
            if not _metadata(base):
                self.out.ignored.append(f"{where}: not a notebook or .py file")
            return None
        if archive and depth + 1 > lim.max_depth:
            self.out.problems.append(f"{where}: archives nested too deep")
            return None
        if info.file_size > lim.max_file_bytes:
            self.out.problems.append(f"{where}: {_size(info.file_size)}, more than the "
                                     f"{_size(lim.max_file_bytes)} allowed for one file")
            return None
        return parts

    def _copy(self, z: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, budget: _Budget) -> int:
        """Stream one entry out, counting bytes against the upload's budget: declared sizes may lie."""
        lim = self.limits
        size = 0
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out, z.open(info) as src:
            while chunk := src.read(1 << 20):
                size += len(chunk)
                budget.bytes_left -= len(chunk)
                if size > lim.max_file_bytes:
                    raise _TooBig(f"more than {_size(lim.max_file_bytes)} once extracted")
                if budget.bytes_left < 0:
                    raise _TooBig(f"the upload expands past {_size(lim.max_total_bytes)} (its archives together)")
                out.write(chunk)
        return size

    # -------------------------------------------------------------- all together
    def expand(self, paths: list[str | Path]) -> Inputs:
        found: list[_Found] = []
        for given in paths:
            p = Path(given)
            label = str(given).rstrip("/") or "/"
            if p.is_symlink() and not p.is_dir():  # a folder given by a link is the TA's choice; a file is not
                self.out.problems.append(f"{label}: {LINK_REFUSED}")
                continue
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
                    st = p.stat()
                except OSError as e:
                    self.out.problems.append(f"{label}: could not be read ({e.strerror})")
                    continue
                if not self._within(_Budget(self.limits.max_total_bytes, 1), st.st_size, label):
                    continue
                mtime = st.st_mtime
                found.append(_Found(p, label, abs_parts[-3:] if nbg else (p.name,), mtime, nbg,
                                    abs_parts[-2] if nbg else ""))
            elif p.exists():
                self.out.problems.append(f"{label}: not a regular file or folder")
            else:
                self.out.problems.append(f"{label}: no such file or folder")
        found = self._only_this_assignment(found)
        grouping = _grouping_depth(found)
        entries = []
        work = self.workdir.resolve()
        for k, f in enumerate(found):
            origin = None
            try:
                if f.path.resolve().is_relative_to(work):  # extracted from an archive: already a private copy
                    digest = _sha256(f.path)
                else:  # a file of the TA's (or a shared) folder: graded exactly as hashed, never read again
                    origin, staged = f.path, self.workdir / "staged" / str(k) / f.path.name
                    digest = _stage(f.path, staged, self.limits.max_file_bytes)
                    f.path = staged
            except OSError as e:
                self.out.problems.append(f"{f.source}: could not be read ({e.strerror})")
                continue
            except ValueError as e:
                self.out.problems.append(f"{f.source}: {e}")
                continue
            who = identify(f.parts, f.nbgrader, grouping.get(id(f), 0))
            info = who.info
            ts = info.timestamp if info.timestamp is not None else f.mtime
            skip = grouping.get(id(f), 0)
            sub = "/".join(f.parts[skip:-1] + (PurePosixPath(f.parts[-1]).stem,))
            notebook = f.path.suffix.lower() == ".ipynb"
            # Newer sorts later: the LMS's attempt, then a notebook over helper .py files, then the LMS's
            # own upload order, then a time no student controls, then the name (a stable tie-break).
            order = (info.timestamp or 0.0, notebook, info.seq, f.mtime, f.source)
            entries.append(Entry(path=f.path, source=f.source, submission=sub, student=info.student, sha256=digest,
                                 order=order, how=info.how, nbgrader_assignment=f.nbgrader_assignment,
                                 timestamp=ts, name=info.name, detail=info.detail, late=info.late,
                                 claims=who.claims, origin=origin))
            for c in who.claims:
                self.out.notes.append(f"{f.source}: {c}")
            if info.how == AMBIGUOUS:
                self.out.notes.append(
                    f"{f.source}: FLAGGED: its Moodle name parses more than one way ({info.detail}); graded on "
                    f"its own as {info.student}, never merged with another student: check in Moodle whose it is")
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
            for old in group[:-1]:
                self.out.superseded.append((old, newest))
                self.out.why[old.source] = _why(old, newest)
            if newest.how == "brightspace":
                sids = {e.detail.split(" of ")[0] for e in group}
                if len(sids) > 1:
                    self.out.notes.append(
                        f"{newest.source}: {len(sids)} Brightspace submissions under the name {newest.name!r} "
                        "(Brightspace's names carry no user id): if two students share this name, grade the "
                        "older one separately")


def _why(old: Entry, new: Entry) -> str:
    """Why ``new`` counts rather than ``old``, in the words of the rule that decided."""
    (a_ts, a_nb, a_seq, a_time, _), (b_ts, b_nb, b_seq, b_time, _) = old.order, new.order
    if a_ts != b_ts:
        return f"{new.source} is a later {new.how} attempt ({datetime.fromtimestamp(b_ts):%Y-%m-%d %H:%M})"
    if a_nb != b_nb:
        return f"{new.source} is a notebook; a notebook counts over .py files (helpers, scratch)"
    if a_seq != b_seq:
        return f"{new.source} is a later {new.how} upload ({new.detail})"
    if a_time != b_time:
        return f"{new.source} is newer (file time {datetime.fromtimestamp(b_time):%Y-%m-%d %H:%M:%S})"
    return f"{new.source} comes later by name (nothing else tells them apart: check which one the student meant)"


class _TooBig(Exception):
    pass


LINK_REFUSED = "refused, a symbolic link (links in inputs are never followed: copy the file itself in)"


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
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:  # a file swapped for a link: refused
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _stage(path: Path, dest: Path, limit: int) -> str:
    """Copy ``path`` to ``dest`` (in the private work folder), hashing the very bytes copied.

    Stage once, read once: the file a TA's folder holds may change between the
    hash and the job (a sync client, a student's share), so the worker grades
    this copy and the store's key is the hash of exactly what it grades.
    """
    h = hashlib.sha256()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as src, open(dest, "xb") as out:
        copied = 0
        while chunk := src.read(1 << 20):
            copied += len(chunk)
            if copied > limit:
                raise ValueError(f"grew past the size limit ({_size(limit)}) while it was read: skipped")
            h.update(chunk)
            out.write(chunk)
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
