"""The service's memory: one SQLite database (WAL) holding people, tokens, submissions, the queue and results.

Attempts and results are rows of their own: two identical resubmissions are
two submissions, and a regrade is a new job with a new result, the old one
kept. The batch store's one row per (student, content, suites) cannot hold
that, so the service has its own schema.

Exactly once: a job moves ``queued -> running -> done``; its result is
inserted in the same transaction that marks it done, and ``results.job`` is
unique, so no job is ever graded into two results. A job found ``running``
when the service starts was cut off by a stop (``kill -9``): it goes back to
the queue. A job whose worker died under it is tried once more on a fresh
worker, then ends with a grader-failure result marked for a TA.

Tokens and session ids are stored as SHA-256 hashes only; the plain token
exists in the sign-in link and nowhere else.

Durability: the database runs in WAL mode with ``synchronous=FULL``, so a
commit returns only after its WAL frame is fsynced; an acknowledged submission
survives a power cut on a disk that honours fsync (no write cache that lies,
no network file system without working locks). SQLite drops a WAL frame whose
checksum fails, and every later one, without a word: at each start
:meth:`ServiceStore.reconcile` compares the rows with the stored files, and a
file without a row or a row without a file is recorded in ``store_problems``
for staff (the file is kept), never dropped in silence. A database that fails
``PRAGMA quick_check`` is not opened (:class:`StoreDamaged`).

Schema changes are migrations (``_migrate``; a new table is a ``CREATE TABLE IF
NOT EXISTS`` of ``_SCHEMA``): a data folder made by an earlier version is
brought up to date at start, its rows kept.
"""

from __future__ import annotations

import errno
import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.errors import StoreDamaged
from autograder.report.files import database_error
from autograder.results import SubmissionResult

# 2: jobs.note (what the student is told about how the job was graded: a CPU fallback) and jobs.backlog (how many
# of the student's own submissions were waiting when it arrived: the fair order's key)
# 3: store_problems (what the start-up reconciliation found: a file without a row, a row without a file)
SCHEMA_VERSION = 3
MAX_TRIES = 2  # a job whose worker dies twice is marked for a TA

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS people (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL CHECK (role IN ('student', 'staff')), created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY, person TEXT NOT NULL REFERENCES people(id),
    created REAL NOT NULL, expires REAL NOT NULL, revoked REAL);
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY, person TEXT NOT NULL REFERENCES people(id), token TEXT NOT NULL,
    csrf TEXT NOT NULL, created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    id TEXT PRIMARY KEY, person TEXT NOT NULL REFERENCES people(id), assignment TEXT NOT NULL,
    sha256 TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('ipynb', 'py')), filename TEXT NOT NULL,
    size INTEGER NOT NULL, created REAL NOT NULL, late_days INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS submissions_person ON submissions (person, assignment, created);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, submission TEXT NOT NULL REFERENCES submissions(id),
    assignment TEXT NOT NULL, suites TEXT NOT NULL CHECK (suites IN ('hidden', 'public')),
    reason TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),
    tries INTEGER NOT NULL DEFAULT 0, enqueued REAL NOT NULL, started REAL, finished REAL,
    worker TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS jobs_queue ON jobs (state, assignment, id);
CREATE INDEX IF NOT EXISTS jobs_submission ON jobs (submission, id);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL UNIQUE REFERENCES jobs(id),
    submission TEXT NOT NULL REFERENCES submissions(id), suites TEXT NOT NULL, suite_version TEXT NOT NULL,
    status TEXT NOT NULL, total REAL NOT NULL, max_total REAL NOT NULL, seconds REAL NOT NULL,
    needs_ta INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL, result TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS results_submission ON results (submission, id);
CREATE TABLE IF NOT EXISTS extensions (
    person TEXT NOT NULL REFERENCES people(id), assignment TEXT NOT NULL, deadline REAL NOT NULL,
    granted_by TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (person, assignment));
CREATE TABLE IF NOT EXISTS store_problems (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('file_without_row', 'row_without_file')),
    what TEXT NOT NULL, detail TEXT NOT NULL, found REAL NOT NULL, UNIQUE (kind, what));
"""



def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def new_secret(nbytes: int = 16) -> str:
    """An unguessable id or token (URL-safe), never starting with ``-``.

    Tokens and ids reach CSV files (the links, the gradebook), where a cell
    starting with ``-`` is prefixed with an apostrophe against spreadsheet
    formulas (``report.csvfile.safe_cell``): it would no longer be the token.
    """
    while True:
        s = secrets.token_urlsafe(nbytes)
        if not s.startswith("-"):
            return s


@dataclass(frozen=True)
class Person:
    id: str
    name: str
    email: str
    role: str

    @property
    def staff(self) -> bool:
        return self.role == "staff"


@dataclass(frozen=True)
class Submission:
    id: str
    person: str
    assignment: str
    sha256: str
    kind: str
    filename: str
    size: int
    created: float
    late_days: int


@dataclass(frozen=True)
class StoreProblem:
    """A disagreement between the rows and the stored files, found at start and kept for staff."""

    kind: str  # file_without_row | row_without_file
    what: str  # the file's sha256 | the submission's id
    detail: str
    found: float


def disk_full(e: BaseException) -> bool:
    """Whether ``e`` says the data folder's disk (or its quota, or a file size limit) has no room."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return True
    return isinstance(e, sqlite3.OperationalError) and getattr(e, "sqlite_errorcode", None) in (
        sqlite3.SQLITE_FULL, getattr(sqlite3, "SQLITE_IOERR_WRITE", -1))


@dataclass(frozen=True)
class JobRow:
    id: int
    submission: str
    assignment: str
    suites: str
    reason: str
    state: str
    tries: int
    enqueued: float
    started: float | None
    finished: float | None
    worker: str
    error: str
    note: str = ""  # for the student: how it was graded when that differs from what was asked (a CPU fallback)
    backlog: int = 0  # the student's own submissions (staff's regrades, for a regrade) waiting when it arrived


_JOB = ("id, submission, assignment, suites, reason, state, tries, enqueued, started, finished, worker, error, "
        "note, backlog")


@dataclass(frozen=True)
class ResultRow:
    id: int
    job: int
    submission: str
    suites: str
    suite_version: str
    status: str
    total: float
    max_total: float
    seconds: float
    needs_ta: bool
    created: float
    result: dict[str, Any]


class ServiceStore:
    """Thread-safe: each thread gets its own connection; every write is one ``BEGIN IMMEDIATE`` transaction."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._parsed = _Parsed(RESULT_CACHE)
        try:
            db = self.db
            db.execute("PRAGMA journal_mode=WAL")
            check = db.execute("PRAGMA quick_check").fetchall()
            if check != [("ok",)]:
                raise sqlite3.DatabaseError("; ".join(str(r[0]) for r in check[:5]))
            db.executescript(_SCHEMA)
            self._bring_up_to_date()
        except sqlite3.DatabaseError as e:
            self.close()
            if disk_full(e):
                raise StoreDamaged(f"{self.path}: the disk is full, so the store cannot be opened: free space on "
                                   f"it, then start the service again") from None
            if isinstance(e, sqlite3.OperationalError):  # cannot be opened or written (a folder in its place,
                raise database_error(self.path, e, "--data") from None  # no permission): not damaged
            raise StoreDamaged(f"{self.path}: the service's store is damaged ({e}); nothing was changed. Keep a "
                               f"copy of the data folder, restore service.sqlite from a backup (or recover it with "
                               f"`sqlite3 {self.path.name} .recover`), then start again: the start-up check lists "
                               f"the stored files without a row for staff") from None

    def _bring_up_to_date(self) -> None:
        """Bring an earlier version's store up to date (an empty one is made at the newest version)."""
        with self.tx() as t:
            t.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            have = int(t.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
            if have > SCHEMA_VERSION:
                raise StoreDamaged(f"{self.path}: this store was written by a newer torchgrader (schema version "
                                   f"{have}, this one knows {SCHEMA_VERSION}): upgrade torchgrader to serve it")
            _migrate(t)

    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=FULL")  # a committed submission or result survives a power cut
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    def tx(self) -> _Tx:
        return _Tx(self.db)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ------------------------------------------------------------------ people and tokens
    def put_person(self, pid: str, name: str, email: str = "", role: str = "student") -> None:
        with self.tx() as t:
            t.execute("INSERT INTO people (id, name, email, role, created) VALUES (?, ?, ?, ?, ?) "
                      "ON CONFLICT (id) DO UPDATE SET name = excluded.name, email = excluded.email, "
                      "role = excluded.role", (pid, name, email, role, time.time()))

    def person(self, pid: str) -> Person | None:
        row = self.db.execute("SELECT id, name, email, role FROM people WHERE id = ?", (pid,)).fetchone()
        return Person(*row) if row else None

    def people(self, role: str | None = None) -> list[Person]:
        q = "SELECT id, name, email, role FROM people" + (" WHERE role = ?" if role else "") + " ORDER BY role, id"
        return [Person(*r) for r in self.db.execute(q, (role,) if role else ())]

    def issue_token(self, pid: str, days: float) -> str:
        """A new sign-in token for ``pid`` (earlier ones stay valid until revoked); only its hash is kept."""
        token = new_secret(24)
        now = time.time()
        with self.tx() as t:
            t.execute("INSERT INTO tokens (hash, person, created, expires) VALUES (?, ?, ?, ?)",
                      (token_hash(token), pid, now, now + days * 86400))
        return token

    def revoke(self, pid: str) -> int:
        """Revoke every token of ``pid`` and end their sessions; returns how many tokens were live."""
        with self.tx() as t:
            n = t.execute("UPDATE tokens SET revoked = ? WHERE person = ? AND revoked IS NULL",
                          (time.time(), pid)).rowcount
            t.execute("DELETE FROM sessions WHERE person = ?", (pid,))
        return n

    def person_for_token(self, token: str) -> Person | None:
        """The person whose live (unrevoked, unexpired) token this is."""
        row = self.db.execute(
            "SELECT p.id, p.name, p.email, p.role FROM tokens t JOIN people p ON p.id = t.person "
            "WHERE t.hash = ? AND t.revoked IS NULL AND t.expires > ?", (token_hash(token), time.time())).fetchone()
        return Person(*row) if row else None

    def open_session(self, token: str, hours: float) -> tuple[str, str] | None:
        """Exchange a live token for a session: (session id, its CSRF token); None when the token is not live."""
        p = self.person_for_token(token)
        if p is None:
            return None
        sid, csrf = new_secret(32), new_secret(24)
        now = time.time()
        with self.tx() as t:
            t.execute("DELETE FROM sessions WHERE expires < ?", (now,))
            t.execute("INSERT INTO sessions (hash, person, token, csrf, created, expires) VALUES (?, ?, ?, ?, ?, ?)",
                      (token_hash(sid), p.id, token_hash(token), csrf, now, now + hours * 3600))
        return sid, csrf

    def session(self, sid: str) -> tuple[Person, str] | None:
        """(person, CSRF token) of a live session whose token is still live."""
        row = self.db.execute(
            "SELECT p.id, p.name, p.email, p.role, s.csrf FROM sessions s JOIN people p ON p.id = s.person "
            "JOIN tokens t ON t.hash = s.token WHERE s.hash = ? AND s.expires > ? AND t.revoked IS NULL "
            "AND t.expires > ?", (token_hash(sid), time.time(), time.time())).fetchone()
        return (Person(*row[:4]), row[4]) if row else None

    def close_session(self, sid: str) -> None:
        with self.tx() as t:
            t.execute("DELETE FROM sessions WHERE hash = ?", (token_hash(sid),))

    # ------------------------------------------------------------------ submissions and the queue
    def add_submission(self, person: str, assignment: str, sha256: str, kind: str, filename: str, size: int,
                       late_days: int, suites: list[str], *, first: Callable[[], None] | None = None) -> str:
        """Record one accepted submission and queue its jobs (one transaction); returns its unguessable id.

        ``first`` runs inside that transaction before the insert (``BEGIN IMMEDIATE`` holds the write lock, so
        no other upload is checked or inserted meanwhile): the policy check and storing the file, so that
        concurrent uploads cannot all pass a check that only one of them may pass. It refuses by raising.
        """
        sid = new_secret()
        now = time.time()
        with self.tx() as t:
            if first is not None:
                first()
            backlog = t.execute(
                "SELECT COUNT(DISTINCT j.submission) FROM jobs j JOIN submissions s ON s.id = j.submission "
                "WHERE j.state != 'done' AND j.reason = 'submit' AND s.person = ?", (person,)).fetchone()[0]
            t.execute("INSERT INTO submissions (id, person, assignment, sha256, kind, filename, size, created, "
                      "late_days) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (sid, person, assignment, sha256, kind, filename, size, now, late_days))
            for s in suites:
                t.execute("INSERT INTO jobs (submission, assignment, suites, reason, state, enqueued, backlog) "
                          "VALUES (?, ?, ?, 'submit', 'queued', ?, ?)", (sid, assignment, s, now, backlog))
        return sid

    def queue_regrade(self, submission_ids: list[str], by: str) -> int:
        """A new hidden-suite job per submission (the old results are kept); returns how many were queued."""
        now = time.time()
        with self.tx() as t:
            n = 0
            for sid in submission_ids:
                row = t.execute("SELECT assignment, person FROM submissions WHERE id = ?", (sid,)).fetchone()
                if row:
                    backlog = t.execute(
                        "SELECT COUNT(*) FROM jobs j JOIN submissions s ON s.id = j.submission WHERE j.state != "
                        "'done' AND j.reason != 'submit' AND s.person = ?", (row[1],)).fetchone()[0]
                    t.execute("INSERT INTO jobs (submission, assignment, suites, reason, state, enqueued, backlog) "
                              "VALUES (?, ?, 'hidden', ?, 'queued', ?, ?)",
                              (sid, row[0], f"regrade by {by}", now, backlog))
                    n += 1
        return n

    def submission(self, sid: str) -> Submission | None:
        row = self.db.execute("SELECT id, person, assignment, sha256, kind, filename, size, created, late_days "
                              "FROM submissions WHERE id = ?", (sid,)).fetchone()
        return Submission(*row) if row else None

    def submissions(self, person: str | None = None, assignment: str | None = None) -> list[Submission]:
        where, args = [], []
        if person is not None:
            where.append("person = ?")
            args.append(person)
        if assignment is not None:
            where.append("assignment = ?")
            args.append(assignment)
        q = ("SELECT id, person, assignment, sha256, kind, filename, size, created, late_days FROM submissions"
             + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created, rowid")
        return [Submission(*r) for r in self.db.execute(q, args)]

    def submission_counts(self) -> dict[str, int]:
        """How many submissions each person has made (one query: the dashboard lists the whole class)."""
        return dict(self.db.execute("SELECT person, COUNT(*) FROM submissions GROUP BY person").fetchall())

    def jobs_of(self, sid: str) -> list[JobRow]:
        return [JobRow(*r) for r in self.db.execute(f"SELECT {_JOB} FROM jobs WHERE submission = ? ORDER BY id",
                                                    (sid,))]

    def queue(self, assignment: str | None = None) -> list[JobRow]:
        """Running jobs, then queued ones in the order they will be graded (:meth:`order`)."""
        pending = self._pending(self.db, assignment)
        return [j for j in pending if j.state == "running"] + _fair_order(pending)

    def recent_jobs(self, n: int) -> list[JobRow]:
        """The ``n`` jobs finished last (for staff: when each was queued, started and finished, and by whom)."""
        return [JobRow(*r) for r in self.db.execute(
            f"SELECT {_JOB} FROM jobs WHERE state = 'done' ORDER BY finished DESC LIMIT ?", (n,))]

    def order(self, assignment: str) -> list[JobRow]:
        """The queued jobs of ``assignment`` in the order the workers will take them (:func:`_fair_order`)."""
        return _fair_order(self._pending(self.db, assignment))

    @staticmethod
    def _pending(db: sqlite3.Connection, assignment: str | None) -> list[JobRow]:
        """Queued and running jobs (one query on an index: status calls come every second from each student)."""
        q = (f"SELECT {_JOB} FROM jobs WHERE state IN ('queued', 'running')"
             + (" AND assignment = ?" if assignment else "") + " ORDER BY id")
        return [JobRow(*r) for r in db.execute(q, (assignment,) if assignment else ())]

    def waiting(self) -> int:
        """Students' submissions waiting or being graded (what the queue bound counts; regrades do not)."""
        return int(self.db.execute("SELECT COUNT(*) FROM jobs WHERE state != 'done' AND reason = 'submit'")
                   .fetchone()[0])

    def waiting_of(self, person: str) -> int:
        """``person``'s own submissions not yet graded (what the per-student cap counts)."""
        return int(self.db.execute(
            "SELECT COUNT(DISTINCT j.submission) FROM jobs j JOIN submissions s ON s.id = j.submission "
            "WHERE j.state != 'done' AND j.reason = 'submit' AND s.person = ?", (person,)).fetchone()[0])

    def queued(self) -> int:
        """Jobs of any assignment and reason that no worker has taken yet."""
        return int(self.db.execute("SELECT COUNT(*) FROM jobs WHERE state = 'queued'").fetchone()[0])

    def position(self, job: JobRow) -> int:
        """1 for the next job to be graded of its assignment; 0 when it is running or done.

        One COUNT on the queue index, of the queued jobs that :func:`_fair_order` puts before this one (the
        same key): every student polls this every second, and reading the whole queue for each poll made the
        web tier's work grow with the square of the class in a burst (issue 45).
        """
        row = self.db.execute(
            "SELECT j.state, (SELECT COUNT(*) FROM jobs o WHERE o.state = 'queued' AND o.assignment = j.assignment "
            "AND ((o.reason != 'submit') < (j.reason != 'submit') OR ((o.reason != 'submit') = (j.reason != 'submit') "
            "AND (o.backlog < j.backlog OR (o.backlog = j.backlog AND o.id < j.id))))) FROM jobs j WHERE j.id = ?",
            (job.id,)).fetchone()
        return int(row[1]) + 1 if row is not None and row[0] == "queued" else 0

    def claim(self, assignment: str, worker: str, note: str = "") -> JobRow | None:
        """Take the next job of ``assignment`` in the fair order (atomically: two workers never take the same one);
        ``note`` tells its student how it is graded where that differs from what was asked (a CPU fallback)."""
        with self.tx() as t:
            order = _fair_order(self._pending(t, assignment))
            if not order:
                return None
            t.execute("UPDATE jobs SET state = 'running', started = ?, worker = ?, note = ? WHERE id = ?",
                      (time.time(), worker, note, order[0].id))
        return self.job(order[0].id)

    def job(self, jid: int) -> JobRow | None:
        row = self.db.execute(f"SELECT {_JOB} FROM jobs WHERE id = ?", (jid,)).fetchone()
        return JobRow(*row) if row else None

    def finish(self, jid: int, result: dict[str, Any], suite_version: str, *, needs_ta: bool = False,
               error: str = "", worker: str = "") -> bool:
        """Store a running job's result and mark it done, in one transaction; False if it was not running."""
        now = time.time()
        r = SubmissionResult.from_dict(result)
        with self.tx() as t:
            row = t.execute("SELECT submission, suites FROM jobs WHERE id = ? AND state = 'running'",
                            (jid,)).fetchone()
            if row is None:
                return False
            t.execute("INSERT INTO results (job, submission, suites, suite_version, status, total, max_total, "
                      "seconds, needs_ta, created, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (jid, row[0], row[1], suite_version, r.status, r.total, r.max_total, r.seconds, int(needs_ta),
                       now, json.dumps(r.to_dict())))
            # a retried job keeps the first try's error (for staff); a Dask job names the worker that graded it
            t.execute("UPDATE jobs SET state = 'done', finished = ?, error = COALESCE(NULLIF(?, ''), error), "
                      "worker = COALESCE(NULLIF(?, ''), worker) WHERE id = ?", (now, error, worker, jid))
        return True

    def worker_died(self, jid: int, error: str) -> bool:
        """Count a try against a running job and queue it again; False when it has had its tries (then finish it)."""
        with self.tx() as t:
            row = t.execute("SELECT tries FROM jobs WHERE id = ? AND state = 'running'", (jid,)).fetchone()
            if row is None:
                return True
            if row[0] + 1 >= MAX_TRIES:
                t.execute("UPDATE jobs SET tries = tries + 1, error = ? WHERE id = ?", (error[-2000:], jid))
                return False
            t.execute("UPDATE jobs SET state = 'queued', tries = tries + 1, started = NULL, error = ? WHERE id = ?",
                      (error[-2000:], jid))
        return True

    def release(self, jid: int) -> None:
        """Put a running job back at its place in the queue (its worker stopped through no fault of the job)."""
        with self.tx() as t:
            t.execute("UPDATE jobs SET state = 'queued', started = NULL WHERE id = ? AND state = 'running'", (jid,))

    def requeue_interrupted(self) -> int:
        """At start: jobs left running by a stopped service go back to the queue (no try counted)."""
        with self.tx() as t:
            return t.execute("UPDATE jobs SET state = 'queued', started = NULL WHERE state = 'running'").rowcount

    # ------------------------------------------------------------------ results
    def results_of(self, sid: str) -> list[ResultRow]:
        return [_result(r) for r in self.db.execute(
            "SELECT id, job, submission, suites, suite_version, status, total, max_total, seconds, needs_ta, created, "
            "result FROM results WHERE submission = ? ORDER BY id", (sid,))]

    def result_summaries(self, sid: str) -> list[tuple[int, str, str, float, float, bool]]:
        """(id, suites, status, total, max_total, needs_ta) per result of ``sid``: what a status call needs,
        without reading the results' JSON (status calls come every second from every waiting student)."""
        return [(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in self.db.execute(
            "SELECT id, suites, status, total, max_total, needs_ta FROM results WHERE submission = ? ORDER BY id",
            (sid,))]

    def result_dict(self, rid: int) -> dict[str, Any]:
        return self._parsed.get(("json", rid), lambda: json.loads(
            self.db.execute("SELECT result FROM results WHERE id = ?", (rid,)).fetchone()[0]))

    def submission_result(self, rid: int) -> SubmissionResult:
        """Result ``rid`` as the view-model reads it, parsed once (see :class:`_Parsed`)."""
        return self._parsed.get(("result", rid), lambda: SubmissionResult.from_dict(self.result_dict(rid)))

    def latest_results(self, assignment: str, suites: str = "hidden", person: str | None = None
                       ) -> dict[str, ResultRow]:
        """Each submission's newest result on ``suites`` (a regrade's replaces the earlier one for counting), of
        one ``person`` or of the whole class. Only those newest results' JSON is read: a class's results are
        large, and a student's page must not read everyone's."""
        rows = self.db.execute(
            "SELECT r.id, r.job, r.submission, r.suites, r.suite_version, r.status, r.total, r.max_total, r.seconds, "
            "r.needs_ta, r.created FROM results r JOIN submissions s ON s.id = r.submission "
            "WHERE s.assignment = ? AND r.suites = ?" + (" AND s.person = ?" if person is not None else "")
            + " ORDER BY r.id", (assignment, suites, *([person] if person is not None else [])))
        newest = {r[2]: r for r in rows}
        return {sid: ResultRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], bool(r[9]), r[10],
                               self.result_dict(r[0])) for sid, r in newest.items()}

    def needs_ta(self) -> list[tuple[str, str, str]]:
        """(submission, person, assignment) whose newest hidden result is a grader failure for a TA to look at."""
        rows = self.db.execute(
            "SELECT r.submission, s.person, s.assignment, r.needs_ta FROM results r "
            "JOIN submissions s ON s.id = r.submission WHERE r.suites = 'hidden' ORDER BY r.id").fetchall()
        latest = {sub: (person, a, flag) for sub, person, a, flag in rows}
        return [(sub, person, a) for sub, (person, a, flag) in latest.items() if flag]

    def gradings(self) -> dict[int, int]:
        """How many results each job has (the exactly-once check: every value is 1)."""
        return dict(self.db.execute("SELECT job, COUNT(*) FROM results GROUP BY job").fetchall())

    # ------------------------------------------------------------------ the rows against the files
    def reconcile(self, blobs_root: Path) -> list[StoreProblem]:
        """At start: every stored file has a submission row and every row its file; what does not is recorded.

        A file without a row is an upload whose row the database lost (a damaged WAL frame is dropped by
        SQLite without a word) or one cut off between its file and its commit; a row without a file is a
        submission whose bytes the disk lost. Neither is deleted or hidden: each is kept in
        ``store_problems`` (staff see it on the dashboard) and returned when it is new.
        """
        root = Path(blobs_root)
        rows = {r[0]: r[1] for r in self.db.execute("SELECT sha256, id FROM submissions ORDER BY created")}
        found: list[StoreProblem] = []
        now = time.time()
        files: set[str] = set()
        if root.is_dir():
            for sub in sorted(root.iterdir()):
                if not sub.is_dir():
                    continue
                for f in sorted(sub.iterdir()):
                    if f.name.startswith("."):  # a write cut off before its rename: never acknowledged
                        continue
                    files.add(f.name)
                    if f.name not in rows:
                        size = f.stat().st_size
                        found.append(StoreProblem("file_without_row", f.name,
                                                  f"{f} ({size} bytes) has no submission row: an upload whose "
                                                  f"record the database lost, or one cut off before its commit; "
                                                  f"the file is kept", now))
        for sha, sid in rows.items():
            if sha not in files:
                found.append(StoreProblem("row_without_file", sid, f"submission {sid} has no stored file "
                                          f"(sha256 {sha[:12]}): its grading is marked for staff", now))
        new = []
        with self.tx() as t:
            for p in found:
                if t.execute("INSERT OR IGNORE INTO store_problems (kind, what, detail, found) VALUES (?, ?, ?, ?)",
                             (p.kind, p.what, p.detail, p.found)).rowcount:
                    new.append(p)
        return new

    def store_problems(self) -> list[StoreProblem]:
        return [StoreProblem(*r) for r in self.db.execute(
            "SELECT kind, what, detail, found FROM store_problems ORDER BY id")]

    # ------------------------------------------------------------------ extensions
    def set_extension(self, person: str, assignment: str, deadline: float, by: str) -> None:
        with self.tx() as t:
            t.execute("INSERT OR REPLACE INTO extensions VALUES (?, ?, ?, ?, ?)",
                      (person, assignment, deadline, by, time.time()))

    def extension(self, person: str, assignment: str) -> float | None:
        row = self.db.execute("SELECT deadline FROM extensions WHERE person = ? AND assignment = ?",
                              (person, assignment)).fetchone()
        return float(row[0]) if row else None

    def extensions(self) -> list[tuple[str, str, float, str]]:
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(
            "SELECT person, assignment, deadline, granted_by FROM extensions ORDER BY assignment, person")]


def _migrate(t: sqlite3.Connection) -> None:
    """Bring a data folder of an earlier version up to this one, in the transaction that opens the store."""
    columns = {r[1] for r in t.execute("PRAGMA table_info(jobs)")}
    if "note" not in columns:  # version 1
        t.execute("ALTER TABLE jobs ADD COLUMN note TEXT NOT NULL DEFAULT ''")
    if "backlog" not in columns:
        t.execute("ALTER TABLE jobs ADD COLUMN backlog INTEGER NOT NULL DEFAULT 0")
    t.execute("UPDATE meta SET value = ? WHERE key = 'schema_version' AND CAST(value AS INTEGER) < ?",
              (str(SCHEMA_VERSION), SCHEMA_VERSION))


def _fair_order(pending: list[JobRow]) -> list[JobRow]:
    """The queued jobs among ``pending`` in the order they are graded.

    Students' own submissions come before staff regrades; among each, by backlog: a submission that arrived
    while its student had none waiting before one that arrived behind their own earlier ones (so a student's
    first before anyone's second, and one student's backlog never before another's first); then the order of
    arrival. A burst from one student, or a "regrade everyone", thus delays another student's fresh
    submission by at most the jobs already running.
    """
    return sorted((j for j in pending if j.state == "queued"), key=lambda j: (j.reason != "submit", j.backlog, j.id))


RESULT_CACHE = 4096  # parsed results kept per store: the counting attempts of a large class, and then some


class _Parsed:
    """Results parsed once: a stored result is never changed (a regrade adds a row), and the dashboard, the
    exports and the class report read every counting attempt of the class on each request, which made a
    render parse a class's JSON (O(class) 45 KB parses) while the graders saturated the cores (issue 45).
    Least recently used first out; shared by the web tier's threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: OrderedDict[tuple[str, int], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int], make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()  # outside the lock: two threads may parse one result at once, never wait on each other
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
        return value


def _result(r: tuple) -> ResultRow:
    return ResultRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], bool(r[9]), r[10], json.loads(r[11]))


class _Tx:
    """``with store.tx() as t:`` one ``BEGIN IMMEDIATE ... COMMIT`` (rolled back on an exception)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if not exc_type:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite may have rolled back already (a full disk): the first error stands
            self.db.execute("ROLLBACK")
