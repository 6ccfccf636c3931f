"""The batch's memory: a SQLite database in the output folder.

A result is committed, in its own transaction, as soon as its submission is
graded, so a batch stopped at any moment (Ctrl-C, a crash, a power cut)
loses at most the submissions that were being graded. A result's key is
(assignment, student, sha256 of the submission file, grading key), the
grading key being the suite version (the hidden material) and a digest of
every setting that can change a score (limits, exercises, isolation, image
and device, the grader's and torch's versions: :func:`grading_key`). A rerun
grades only what is missing, changed, or was graded with other material or
settings, and says why (:meth:`Store.why_regraded`); a result stored before
the settings were part of the key is never read with a key it lacks. Every
grading is also appended to ``gradings``, which is how "graded exactly once"
is checked. Results are stored as the JSON of
:meth:`SubmissionResult.to_dict`, never as pickles.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from autograder.assignment import ASSIGNMENT_TOML, EXERCISE_TOML, Assignment, is_material
from autograder.report.files import database_error
from autograder.results import SubmissionResult

DB_NAME = "grades.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    suite_version TEXT NOT NULL,
    submission TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    total REAL NOT NULL,
    max_total REAL NOT NULL,
    seconds REAL NOT NULL,
    graded_at REAL NOT NULL,
    run_id INTEGER,
    result TEXT NOT NULL,
    PRIMARY KEY (assignment, student, sha256, suite_version)
);
CREATE TABLE IF NOT EXISTS gradings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    suite_version TEXT NOT NULL,
    run_id INTEGER,
    worker TEXT,
    graded_at REAL NOT NULL,
    seconds REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    suite_version TEXT NOT NULL,
    argv TEXT NOT NULL,
    started REAL NOT NULL,
    finished REAL,
    planned INTEGER NOT NULL DEFAULT 0,
    graded INTEGER NOT NULL DEFAULT 0,
    reused INTEGER NOT NULL DEFAULT 0
);
"""


def suite_version(assignment: Assignment) -> str:
    """A hash of everything that decides a grade: hidden material and exercise metadata.

    Staff-only files that never take part in grading (the reference,
    alternatives, mutants) are left out, so adding a mutant does not regrade a
    class, and a worker given only the grading material computes the same version.
    """
    h = hashlib.sha256()

    def add(label: str, path: Path) -> None:
        h.update(label.encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"<missing>")
        h.update(b"\0")

    add(ASSIGNMENT_TOML, assignment.public_dir / ASSIGNMENT_TOML)
    h.update(json.dumps(assignment.ids).encode())
    for ex in assignment.exercises:
        add(f"{ex.id}/{EXERCISE_TOML}", ex.toml)
        if not ex.hidden_dir.is_dir():
            continue
        for p in sorted(ex.hidden_dir.rglob("*")):
            rel = p.relative_to(ex.hidden_dir)
            # the grading material, as assignment.material_files ships it to workers elsewhere: one answer, so
            # a Dask or container worker computes this same version (a mutation record counted here and not
            # shipped made the service restart its worker before every job)
            if p.is_file() and not p.is_symlink() and is_material(rel, staff=False):
                add(f"{ex.id}/hidden/{rel.as_posix()}", p)
    return h.hexdigest()[:16]


KEY_SEPARATOR = "+"  # grading key = <suite version>+<settings digest>; keys without it predate the settings


def grading_key(suite: str, settings: dict[str, Any]) -> str:
    """The store's key for results of hidden material ``suite`` graded with ``settings`` (plain JSON values)."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"{suite}{KEY_SEPARATOR}{digest}"


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def _db_text(s: str) -> str:
    """A string SQLite can store: a lone surrogate (from a file name) must not stop a result being committed."""
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


class Store:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # explicit transactions
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a committed result survives a power cut
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(_SCHEMA)
            with self.db:
                self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except (sqlite3.Error, OSError) as e:  # --out cannot hold the database: say which path, and what to do
            raise database_error(self.path, e, "--out") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs
    def open_batch(self, assignment: str, version: str, argv: list[str], planned: int, reused: int) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (assignment, suite_version, argv, started, planned, reused) VALUES (?, ?, ?, ?, ?, ?)",
            (assignment, version, json.dumps(argv), time.time(), planned, reused))
        return int(cur.lastrowid or 0)

    def remember_settings(self, key: str, settings: dict[str, Any]) -> None:
        """What a grading key stands for, so a later run with other settings can say what changed."""
        self.db.execute("INSERT OR IGNORE INTO settings VALUES (?, ?)",
                        (key, json.dumps(settings, sort_keys=True, default=str)))

    def why_regraded(self, assignment: str, student: str, sha256: str, key: str) -> str | None:
        """Why this file, graded before under another key, is graded again ("" reasons: None, never graded)."""
        rows = self.db.execute(
            "SELECT suite_version FROM results WHERE assignment = ? AND student = ? AND sha256 = ? "
            "AND suite_version != ? AND status != 'internal_error' ORDER BY graded_at DESC",
            (assignment, student, sha256, key)).fetchall()
        if not rows:
            return None
        old = rows[0][0]
        if KEY_SEPARATOR not in old:
            return ("its stored result comes from an earlier torchgrader whose results do not record the grading "
                    "settings (limits, exercises, isolation, image, versions)")
        if old.split(KEY_SEPARATOR)[0] != key.split(KEY_SEPARATOR)[0]:
            return f"the hidden material changed (suites, {EXERCISE_TOML} or {ASSIGNMENT_TOML})"
        was, now = self._settings(old), self._settings(key)
        if was is None or now is None:
            return "the grading settings changed"
        a, b = _flat(was), _flat(now)
        changed = [f"{k} {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        return "the grading settings changed: " + ", ".join(changed)

    def _settings(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT settings FROM settings WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def close_batch(self, run_id: int) -> None:
        self.db.execute("UPDATE runs SET finished = ? WHERE id = ?", (time.time(), run_id))

    # ------------------------------------------------------------------ results
    def get(self, assignment: str, student: str, sha256: str, version: str) -> SubmissionResult | None:
        row = self.db.execute(
            "SELECT result FROM results WHERE assignment = ? AND student = ? AND sha256 = ? AND suite_version = ?",
            (assignment, student, sha256, version)).fetchone()
        return SubmissionResult.from_dict(json.loads(row[0])) if row else None

    def has(self, assignment: str, student: str, sha256: str, version: str) -> bool:
        """Graded already; a grader failure (``internal_error``) does not count: it is tried again."""
        return self.db.execute(
            "SELECT 1 FROM results WHERE assignment = ? AND student = ? AND sha256 = ? AND suite_version = ? "
            "AND status != 'internal_error'", (assignment, student, sha256, version)).fetchone() is not None

    def put(self, r: SubmissionResult, version: str, *, run_id: int | None = None, worker: str = "") -> None:
        """Commit one graded submission (result and grading event) in one transaction."""
        now = time.time()
        key = (r.assignment, r.student, r.sha256, version)
        with self.db:  # BEGIN ... COMMIT, or ROLLBACK on error
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "INSERT OR REPLACE INTO results (assignment, student, sha256, suite_version, submission, source, "
                "status, total, max_total, seconds, graded_at, run_id, result) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, _db_text(r.submission), _db_text(r.path), r.status, r.total, r.max_total, r.seconds, now,
                 run_id, json.dumps(r.to_dict())))
            self.db.execute(
                "INSERT INTO gradings (assignment, student, sha256, suite_version, run_id, worker, graded_at, seconds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*key, run_id, worker, now, r.seconds))
            if run_id is not None:
                self.db.execute("UPDATE runs SET graded = graded + 1 WHERE id = ?", (run_id,))

    def gradings(self, assignment: str | None = None) -> dict[tuple[str, str, str], int]:
        """How many times each (student, sha256, suite version) was graded."""
        q = "SELECT student, sha256, suite_version, COUNT(*) FROM gradings"
        rows = self.db.execute(q + (" WHERE assignment = ?" if assignment else "") + " GROUP BY 1, 2, 3",
                               (assignment,) if assignment else ()).fetchall()
        return {(a, b, c): n for a, b, c, n in rows}

    def assignments(self) -> set[str]:
        """Every assignment this store holds runs or results of (an output folder serves one assignment)."""
        rows = self.db.execute("SELECT assignment FROM runs UNION SELECT assignment FROM results").fetchall()
        return {r[0] for r in rows}

