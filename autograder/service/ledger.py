"""The staff's records beside the store: the submissions list a TA searches, what was reviewed, the audit log.

Its tables live in the service's one SQLite database (``ServiceStore``) and are created when missing, so a
data folder of an earlier version gains them on its first start and loses nothing. Every staff action that
changes what a student is shown or graded (a regrade, an extension, a review mark) writes one audit row:
who, when, what, before and after.

The submissions list is one SQL query over submissions, each one's newest hidden job and result, and the
review marks, filtered, sorted and paged on the server, so a page costs the same at 1,000 students as at 10.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from autograder.service.store import ServiceStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS reviews (
    submission TEXT PRIMARY KEY REFERENCES submissions(id), by TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, by TEXT NOT NULL, action TEXT NOT NULL,
    person TEXT NOT NULL DEFAULT '', submission TEXT NOT NULL DEFAULT '', assignment TEXT NOT NULL DEFAULT '',
    before TEXT NOT NULL DEFAULT '', after TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS audit_submission ON audit (submission, id);
CREATE INDEX IF NOT EXISTS audit_person ON audit (person, id);
CREATE TABLE IF NOT EXISTS adjustments (
    id INTEGER PRIMARY KEY AUTOINCREMENT, submission TEXT NOT NULL REFERENCES submissions(id),
    exercise TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('add', 'set')), points REAL NOT NULL,
    reason TEXT NOT NULL, by TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS adjustments_submission ON adjustments (submission, id);
CREATE TABLE IF NOT EXISTS regrade_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, submission TEXT NOT NULL REFERENCES submissions(id),
    person TEXT NOT NULL, assignment TEXT NOT NULL, exercise TEXT NOT NULL, test TEXT NOT NULL DEFAULT '',
    comment TEXT NOT NULL, at REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'declined')),
    reply TEXT NOT NULL DEFAULT '', answered_by TEXT NOT NULL DEFAULT '', answered_at REAL);
CREATE INDEX IF NOT EXISTS regrade_requests_submission ON regrade_requests (submission, id);
CREATE INDEX IF NOT EXISTS regrade_requests_state ON regrade_requests (state, id);
"""

PAGE_SIZE = 50
SORTS = {  # the list's sort keys (a closed set: never a column name from the request)
    "created": "s.created", "student": "s.person", "name": "p.name", "score": "r.total",
    "status": "status", "late": "s.late_days", "assignment": "s.assignment",
}
STATUSES = ("queued", "running", "graded", "error")


@dataclass(frozen=True)
class Filters:
    """What the list shows: every field optional; ``similar`` is the ids the class review paired."""

    q: str = ""  # in the student's id or name, or the file's name
    assignment: str = ""
    status: str = ""  # one of STATUSES
    late: bool | None = None
    flagged: bool | None = None  # the grader failed on it (marked for a TA)
    reviewed: bool | None = None
    min_score: float | None = None
    max_score: float | None = None
    similar: frozenset[str] | None = None  # only these submissions (None: no similarity filter)
    sort: str = "created"
    descending: bool = True
    page: int = 1


@dataclass(frozen=True)
class Row:
    """One submission as the list shows it: its newest hidden job and result."""

    id: str
    person: str
    name: str
    assignment: str
    filename: str
    created: float
    late_days: int
    status: str
    score: float | None
    max_score: float | None
    needs_ta: bool
    results: int  # how many hidden results it has (more than one: it was regraded)
    reviewed_by: str
    reviewed_at: float | None


@dataclass(frozen=True)
class AuditRow:
    id: int
    at: float
    by: str
    action: str
    person: str
    submission: str
    assignment: str
    before: str
    after: str
    reason: str


@dataclass(frozen=True)
class Adjustment:
    """Staff's change to one exercise's points of a submission: ``add`` (negative: a deduction) or ``set``
    (an override), with the reason the student reads."""

    id: int
    submission: str
    exercise: str
    kind: str
    points: float
    reason: str
    by: str
    at: float


def adjustments_of(store: ServiceStore, sids: list[str]) -> dict[str, list[Adjustment]]:
    """Each submission's adjustments, oldest first (none before the ledger's tables exist)."""
    if not sids:
        return {}
    out: dict[str, list[Adjustment]] = {}
    try:
        rows = store.db.execute(
            "SELECT id, submission, exercise, kind, points, reason, by, at FROM adjustments WHERE submission IN "
            f"({','.join('?' * len(sids))}) ORDER BY id", sids).fetchall()
    except sqlite3.OperationalError:  # an older data folder the web tier has not opened yet: no adjustments
        return {}
    for r in rows:
        out.setdefault(r[1], []).append(Adjustment(*r))
    return out


def adjusted(points: dict[str, tuple[float, float]], adjustments: list[Adjustment]) -> dict[str, float]:
    """Each exercise's points after ``adjustments`` (applied in order, kept within 0 and its maximum), from
    ``points``: exercise -> (points the grader gave, maximum)."""
    out = {ex: got for ex, (got, _) in points.items()}
    for a in adjustments:
        if a.exercise not in points:
            continue
        got = a.points if a.kind == "set" else out[a.exercise] + a.points
        out[a.exercise] = min(max(got, 0.0), points[a.exercise][1])
    return out


@dataclass(frozen=True)
class RegradeRequest:
    """A student's request that staff look again at one exercise (or one test of it) of a graded submission,
    and staff's answer: ``accepted`` (with an adjustment) or ``declined``, with a reply the student reads."""

    id: int
    submission: str
    person: str
    assignment: str
    exercise: str
    test: str  # a test's node id, or "" for the whole exercise
    comment: str
    at: float
    state: str  # open, accepted, declined
    reply: str
    answered_by: str
    answered_at: float | None


_REQUEST = ("SELECT id, submission, person, assignment, exercise, test, comment, at, state, reply, answered_by, "
            "answered_at FROM regrade_requests")


@dataclass(frozen=True)
class ResultOrigin:
    """One result of a submission and the job that made it: what its history shows."""

    id: int
    created: float
    suite_version: str
    status: str
    total: float
    max_total: float
    reason: str  # the job's: submit, or "regrade by ID"


_STATUS = ("CASE WHEN j.state IS NULL THEN 'queued' WHEN j.state != 'done' THEN j.state "
           "WHEN r.status = 'internal_error' THEN 'error' ELSE 'graded' END")
_FROM = """
FROM submissions s JOIN people p ON p.id = s.person
LEFT JOIN (SELECT submission, MAX(id) AS jid FROM jobs WHERE suites = 'hidden' GROUP BY submission) lj
       ON lj.submission = s.id
LEFT JOIN jobs j ON j.id = lj.jid
LEFT JOIN (SELECT submission, MAX(id) AS rid, COUNT(*) AS n FROM results WHERE suites = 'hidden'
           GROUP BY submission) lr ON lr.submission = s.id
LEFT JOIN results r ON r.id = lr.rid
LEFT JOIN reviews rv ON rv.submission = s.id
"""


class Ledger:
    """The staff's queries and records over ``store``'s database."""

    def __init__(self, store: ServiceStore) -> None:
        self.store = store
        with store.tx() as t:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    t.execute(stmt)

    # ------------------------------------------------------------------ the list
    def find(self, f: Filters, page_size: int = PAGE_SIZE) -> tuple[int, list[Row]]:
        """(how many match, the rows of page ``f.page``)."""
        where: list[str] = []
        args: list[str | float] = []
        if f.q:
            like = "%" + f.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            where.append("(s.person LIKE ? ESCAPE '\\' OR p.name LIKE ? ESCAPE '\\' OR s.filename LIKE ? "
                         "ESCAPE '\\')")
            args += [like, like, like]
        if f.assignment:
            where.append("s.assignment = ?")
            args.append(f.assignment)
        if f.status in STATUSES:
            where.append(f"{_STATUS} = ?")
            args.append(f.status)
        if f.late is not None:
            where.append("s.late_days > 0" if f.late else "s.late_days = 0")
        if f.flagged is not None:
            where.append("COALESCE(r.needs_ta, 0) = ?")
            args.append(int(f.flagged))
        if f.reviewed is not None:
            where.append("rv.submission IS NOT NULL" if f.reviewed else "rv.submission IS NULL")
        if f.min_score is not None:
            where.append("r.total >= ?")
            args.append(f.min_score)
        if f.max_score is not None:
            where.append("r.total <= ?")
            args.append(f.max_score)
        if f.similar is not None:
            ids = sorted(f.similar)
            where.append(f"s.id IN ({','.join('?' * len(ids))})" if ids else "0")
            args += ids
        sql_where = (" WHERE " + " AND ".join(where)) if where else ""
        db = self.store.db
        total = db.execute(f"SELECT COUNT(*) {_FROM}{sql_where}", args).fetchone()[0]
        order = SORTS.get(f.sort, "s.created")
        direction = "DESC" if f.descending else "ASC"
        nulls = "NULLS LAST" if order == "r.total" else ""
        offset = max(0, f.page - 1) * page_size
        rows = db.execute(
            f"SELECT s.id, s.person, p.name, s.assignment, s.filename, s.created, s.late_days, {_STATUS} AS status, "
            f"r.total, r.max_total, COALESCE(r.needs_ta, 0), COALESCE(lr.n, 0), COALESCE(rv.by, ''), rv.at "
            f"{_FROM}{sql_where} ORDER BY {order} {direction} {nulls}, s.created DESC, s.id LIMIT ? OFFSET ?",
            [*args, page_size, offset]).fetchall()
        return total, [Row(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), r[11], r[12],
                           r[13]) for r in rows]

    def results(self, sid: str, suites: str) -> list[ResultOrigin]:
        """Every result of ``sid`` on ``suites``, oldest first, with why its job ran."""
        return [ResultOrigin(*r) for r in self.store.db.execute(
            "SELECT r.id, r.created, r.suite_version, r.status, r.total, r.max_total, j.reason FROM results r "
            "JOIN jobs j ON j.id = r.job WHERE r.submission = ? AND r.suites = ? ORDER BY r.id", (sid, suites))]

    # ------------------------------------------------------------------ review marks
    def set_reviewed(self, sid: str, by: str, reviewed: bool) -> None:
        with self.store.tx() as t:
            was = t.execute("SELECT by FROM reviews WHERE submission = ?", (sid,)).fetchone()
            if reviewed and not was:
                t.execute("INSERT INTO reviews VALUES (?, ?, ?)", (sid, by, time.time()))
            elif not reviewed and was:
                t.execute("DELETE FROM reviews WHERE submission = ?", (sid,))
            else:
                return
            _audit(t, by, "review", submission=sid, before="reviewed" if was else "not reviewed",
                   after="reviewed" if reviewed else "not reviewed")

    # ------------------------------------------------------------------ adjustments
    def adjust(self, sid: str, exercise: str, kind: str, points: float, reason: str, by: str,
               before: str, after: str) -> None:
        """Record one adjustment and its audit row (who, when, the total before and after, why) at once."""
        with self.store.tx() as t:
            _adjust(t, sid, exercise, kind, points, reason, by, before, after)

    # ------------------------------------------------------------------ regrade requests
    def request_regrade(self, sid: str, exercise: str, test: str, comment: str) -> int:
        """Record a student's request (and its audit row); refused while one on the same target is open."""
        with self.store.tx() as t:
            person, assignment = t.execute("SELECT person, assignment FROM submissions WHERE id = ?",
                                           (sid,)).fetchone()
            if t.execute("SELECT 1 FROM regrade_requests WHERE submission = ? AND exercise = ? AND test = ? AND "
                         "state = 'open'", (sid, exercise, test)).fetchone():
                raise ValueError("a request on this is already open")
            rid = t.execute("INSERT INTO regrade_requests (submission, person, assignment, exercise, test, comment, "
                            "at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (sid, person, assignment, exercise, test, comment, time.time())).lastrowid
            _audit(t, person, "regrade request", person=person, submission=sid, assignment=assignment,
                   after=f"open: {exercise}{' / ' + test if test else ''}", reason=comment)
        return int(rid or 0)

    def requests(self, *, submission: str | None = None, state: str | None = None) -> list[RegradeRequest]:
        """Regrade requests, oldest first: of one submission, or in one state (the queue: ``open``), or all."""
        where, args = [], []
        if submission is not None:
            where.append("submission = ?")
            args.append(submission)
        if state is not None:
            where.append("state = ?")
            args.append(state)
        sql_where = (" WHERE " + " AND ".join(where)) if where else ""
        return [RegradeRequest(*r) for r in self.store.db.execute(f"{_REQUEST}{sql_where} ORDER BY id", args)]

    def request(self, rid: int) -> RegradeRequest | None:
        r = self.store.db.execute(f"{_REQUEST} WHERE id = ?", (rid,)).fetchone()
        return RegradeRequest(*r) if r else None

    def answer(self, rid: int, state: str, reply: str, by: str,
               adjustment: tuple[str, float, str, str] | None = None) -> bool:
        """Close open request ``rid`` as ``accepted`` or ``declined`` with ``reply`` (audited); False when it
        was no longer open (another TA answered first). ``adjustment``: (kind, points, total before, after) of
        the request's exercise, recorded in the same transaction, so an answer never lands without it."""
        with self.store.tx() as t:
            row = t.execute("SELECT person, submission, assignment, exercise, test FROM regrade_requests "
                            "WHERE id = ? AND state = 'open'", (rid,)).fetchone()
            if row is None:
                return False
            if adjustment is not None:
                kind, points, before, after = adjustment
                _adjust(t, row[1], row[3], kind, points, reply, by, before, after)
            t.execute("UPDATE regrade_requests SET state = ?, reply = ?, answered_by = ?, answered_at = ? "
                      "WHERE id = ?", (state, reply, by, time.time(), rid))
            _audit(t, by, f"regrade request {state}", person=row[0], submission=row[1], assignment=row[2],
                   before=f"open: {row[3]}{' / ' + row[4] if row[4] else ''}", after=state, reason=reply)
        return True

    # ------------------------------------------------------------------ audit
    def record(self, by: str, action: str, *, person: str = "", submission: str = "", assignment: str = "",
               before: str = "", after: str = "", reason: str = "") -> None:
        with self.store.tx() as t:
            _audit(t, by, action, person=person, submission=submission, assignment=assignment, before=before,
                   after=after, reason=reason)

    def audit(self, *, submission: str | None = None, person: str | None = None,
              limit: int = 200) -> list[AuditRow]:
        """The newest audit rows first (of one submission, or one person, or all)."""
        where, args = "", []
        if submission is not None:
            where, args = " WHERE submission = ?", [submission]
        elif person is not None:
            where, args = " WHERE person = ?", [person]
        return [AuditRow(*r) for r in self.store.db.execute(
            "SELECT id, at, by, action, person, submission, assignment, before, after, reason FROM audit"
            f"{where} ORDER BY id DESC LIMIT ?", [*args, limit])]


def _adjust(t: sqlite3.Connection, sid: str, exercise: str, kind: str, points: float, reason: str, by: str,
            before: str, after: str) -> None:
    t.execute("INSERT INTO adjustments (submission, exercise, kind, points, reason, by, at) "
              "VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, exercise, kind, points, reason, by, time.time()))
    person = t.execute("SELECT person, assignment FROM submissions WHERE id = ?", (sid,)).fetchone()
    _audit(t, by, f"adjust {exercise}", submission=sid, person=person[0] if person else "",
           assignment=person[1] if person else "", before=before, after=after, reason=reason)


def _audit(t: sqlite3.Connection, by: str, action: str, **fields: str) -> None:
    cols = ["at", "by", "action", *fields]
    t.execute(f"INSERT INTO audit ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
              [time.time(), by, action, *fields.values()])
