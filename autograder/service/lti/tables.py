"""The LTI tables in the service's store: added by numbered migrations, so an existing data folder survives.

``meta.lti_schema`` counts the migrations applied; each runs in one
transaction with its version bump, so a stop between two leaves the store at
one of them. Nothing here deletes a person: a member who left the LMS course
is marked ``left`` and keeps their submissions.

- ``lti_logins``: one row per OIDC login started (hashes of the state and of
  the browser's binder, the nonce); used once, by the launch that ends it.
- ``lti_nonces``: each ``id_token`` nonce accepted, per issuer (a replay is refused).
- ``lti_platforms``: platforms registered by LTI Dynamic Registration.
- ``lti_users``: the LMS's ``sub`` per issuer -> a person.
- ``lti_contexts``: an LMS course (context) with its service URLs, as the last launch gave them.
- ``lti_members``: who is in which context, with role and status (active / left).
- ``lti_lineitems``: the line item of each assignment in each context, found or created once.
- ``lti_outbox``: one row per change of a counting score to post; its state and the LMS's answer.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from autograder.service.lti.config import Platform
from autograder.service.store import ServiceStore

MIGRATIONS: list[str] = [
    """
    CREATE TABLE IF NOT EXISTS lti_logins (
        state TEXT PRIMARY KEY, nonce TEXT NOT NULL, issuer TEXT NOT NULL, client_id TEXT NOT NULL,
        binder TEXT NOT NULL, mode TEXT NOT NULL CHECK (mode IN ('cookie', 'storage')), target TEXT NOT NULL,
        frame TEXT NOT NULL, created REAL NOT NULL, used REAL);
    CREATE TABLE IF NOT EXISTS lti_nonces (
        issuer TEXT NOT NULL, nonce TEXT NOT NULL, used REAL NOT NULL, PRIMARY KEY (issuer, nonce));
    CREATE TABLE IF NOT EXISTS lti_platforms (
        issuer TEXT NOT NULL, client_id TEXT NOT NULL, name TEXT NOT NULL UNIQUE, auth_login_url TEXT NOT NULL,
        auth_token_url TEXT NOT NULL, jwks_url TEXT NOT NULL, deployment_ids TEXT NOT NULL, created REAL NOT NULL,
        PRIMARY KEY (issuer, client_id));
    CREATE TABLE IF NOT EXISTS lti_users (
        issuer TEXT NOT NULL, sub TEXT NOT NULL, person TEXT NOT NULL UNIQUE REFERENCES people(id),
        created REAL NOT NULL, PRIMARY KEY (issuer, sub));
    CREATE TABLE IF NOT EXISTS lti_contexts (
        issuer TEXT NOT NULL, context TEXT NOT NULL, client_id TEXT NOT NULL, deployment_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '', memberships_url TEXT NOT NULL DEFAULT '',
        lineitems_url TEXT NOT NULL DEFAULT '', scopes TEXT NOT NULL DEFAULT '[]', synced REAL,
        sync_answer TEXT NOT NULL DEFAULT '', updated REAL NOT NULL, PRIMARY KEY (issuer, context));
    CREATE TABLE IF NOT EXISTS lti_members (
        issuer TEXT NOT NULL, context TEXT NOT NULL, person TEXT NOT NULL REFERENCES people(id),
        role TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('active', 'left')), updated REAL NOT NULL,
        PRIMARY KEY (issuer, context, person));
    CREATE TABLE IF NOT EXISTS lti_lineitems (
        issuer TEXT NOT NULL, context TEXT NOT NULL, assignment TEXT NOT NULL, url TEXT NOT NULL,
        created REAL NOT NULL, PRIMARY KEY (issuer, context, assignment));
    CREATE TABLE IF NOT EXISTS lti_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, issuer TEXT NOT NULL, context TEXT NOT NULL,
        assignment TEXT NOT NULL, person TEXT NOT NULL REFERENCES people(id), sub TEXT NOT NULL,
        score_given REAL, score_maximum REAL NOT NULL, activity TEXT NOT NULL, grading TEXT NOT NULL,
        comment TEXT NOT NULL, timestamp TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed', 'superseded')),
        tries INTEGER NOT NULL DEFAULT 0, next_try REAL NOT NULL, answer TEXT NOT NULL DEFAULT '',
        created REAL NOT NULL, sent REAL);
    CREATE INDEX IF NOT EXISTS lti_outbox_due ON lti_outbox (state, next_try);
    CREATE INDEX IF NOT EXISTS lti_outbox_key ON lti_outbox (issuer, context, assignment, person, id);
    """,
]


def digest(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class Login:
    state: str  # its hash
    nonce: str
    issuer: str
    client_id: str
    binder: str  # hash of the browser's binder (cookie mode) or of the state (storage mode)
    mode: str
    target: str
    frame: str  # the platform's storage frame (lti_storage_target), storage mode only
    created: float
    used: float | None


@dataclass(frozen=True)
class Context:
    issuer: str
    context: str
    client_id: str
    deployment_id: str
    title: str
    memberships_url: str
    lineitems_url: str
    scopes: list[str]
    synced: float | None
    sync_answer: str


@dataclass(frozen=True)
class Score:
    """One row of the outbox: a score to post (or posted) to one line item for one person."""

    id: int
    issuer: str
    context: str
    assignment: str
    person: str
    sub: str
    score_given: float | None
    score_maximum: float
    activity: str
    grading: str
    comment: str
    timestamp: str
    state: str
    tries: int
    next_try: float
    answer: str
    created: float
    sent: float | None


_SCORE_COLS = ("id, issuer, context, assignment, person, sub, score_given, score_maximum, activity, grading, comment, "
               "timestamp, state, tries, next_try, answer, created, sent")
_CONTEXT_COLS = ("issuer, context, client_id, deployment_id, title, memberships_url, lineitems_url, scopes, synced, "
                 "sync_answer")


def _context(r: tuple) -> Context:
    return Context(*r[:7], json.loads(r[7]), r[8], r[9])  # type: ignore[call-arg]


class LtiTables:
    """The LTI rows of one ``ServiceStore`` (its connections and transactions)."""

    def __init__(self, store: ServiceStore) -> None:
        self.store = store
        self.migrate()

    def migrate(self) -> None:
        db = self.store.db
        row = db.execute("SELECT value FROM meta WHERE key = 'lti_schema'").fetchone()
        have = int(row[0]) if row else 0
        for n, script in enumerate(MIGRATIONS[have:], start=have + 1):
            with self.store.tx() as t:
                for stmt in (s.strip() for s in script.split(";")):
                    if stmt:
                        t.execute(stmt)
                t.execute("INSERT INTO meta VALUES ('lti_schema', ?) ON CONFLICT (key) DO UPDATE SET "
                          "value = excluded.value", (str(n),))

    # ------------------------------------------------------------------ platforms registered dynamically
    def add_platform(self, p: Platform) -> None:
        with self.store.tx() as t:
            t.execute("INSERT INTO lti_platforms VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (issuer, client_id) DO "
                      "UPDATE SET auth_login_url = excluded.auth_login_url, auth_token_url = excluded.auth_token_url, "
                      "jwks_url = excluded.jwks_url, deployment_ids = excluded.deployment_ids",
                      (p.issuer, p.client_id, p.name, p.auth_login_url, p.auth_token_url, p.jwks_url,
                       json.dumps(list(p.deployment_ids)), time.time()))

    def platforms(self) -> list[Platform]:
        return [Platform(r[2], r[0], r[1], r[3], r[4], r[5], tuple(json.loads(r[6]))) for r in self.store.db.execute(
            "SELECT issuer, client_id, name, auth_login_url, auth_token_url, jwks_url, deployment_ids "
            "FROM lti_platforms ORDER BY created")]

    # ------------------------------------------------------------------ logins and nonces
    def start_login(self, state: str, nonce: str, issuer: str, client_id: str, binder: str, mode: str,
                    target: str, frame: str = "") -> None:
        now = time.time()
        with self.store.tx() as t:
            t.execute("DELETE FROM lti_logins WHERE created < ?", (now - 86400,))
            t.execute("INSERT INTO lti_logins VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                      (digest(state), nonce, issuer, client_id, digest(binder), mode, target, frame, now))

    def login(self, state: str) -> Login | None:
        row = self.store.db.execute("SELECT * FROM lti_logins WHERE state = ?", (digest(state),)).fetchone()
        return Login(*row) if row else None

    def use_login(self, state: str, issuer: str, nonce: str) -> str:
        """Mark a login used and its nonce seen, at once; '' on success, else why not (used, or nonce seen)."""
        now = time.time()
        with self.store.tx() as t:
            if t.execute("SELECT 1 FROM lti_nonces WHERE issuer = ? AND nonce = ?", (issuer, nonce)).fetchone():
                return "nonce"
            if t.execute("UPDATE lti_logins SET used = ? WHERE state = ? AND used IS NULL",
                         (now, digest(state))).rowcount != 1:
                return "login"
            t.execute("INSERT INTO lti_nonces VALUES (?, ?, ?)", (issuer, nonce, now))
        return ""

    def nonce_seen(self, issuer: str, nonce: str) -> bool:
        return self.store.db.execute("SELECT 1 FROM lti_nonces WHERE issuer = ? AND nonce = ?",
                                     (issuer, nonce)).fetchone() is not None

    # ------------------------------------------------------------------ people
    def person_of(self, issuer: str, sub: str) -> str | None:
        row = self.store.db.execute("SELECT person FROM lti_users WHERE issuer = ? AND sub = ?",
                                    (issuer, sub)).fetchone()
        return str(row[0]) if row else None

    def sub_of(self, person: str) -> tuple[str, str] | None:
        row = self.store.db.execute("SELECT issuer, sub FROM lti_users WHERE person = ?", (person,)).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def upsert_person(self, issuer: str, sub: str, pid: str, name: str, email: str, role: str | None) -> str:
        """The person ``sub`` is on ``issuer`` (made on first sight as ``pid``); name, email and, when given, role
        updated from the LMS's signed word. Returns the person's id."""
        now = time.time()
        with self.store.tx() as t:
            row = t.execute("SELECT person FROM lti_users WHERE issuer = ? AND sub = ?", (issuer, sub)).fetchone()
            if row is None:
                t.execute("INSERT INTO people (id, name, email, role, created) VALUES (?, ?, ?, ?, ?)",
                          (pid, name or pid, email, role or "student", now))
                t.execute("INSERT INTO lti_users VALUES (?, ?, ?, ?)", (issuer, sub, pid, now))
                return pid
            pid = str(row[0])
            if name:
                t.execute("UPDATE people SET name = ? WHERE id = ?", (name, pid))
            if email:
                t.execute("UPDATE people SET email = ? WHERE id = ?", (email, pid))
            if role:
                t.execute("UPDATE people SET role = ? WHERE id = ?", (role, pid))
        return pid

    # ------------------------------------------------------------------ contexts and members
    def put_context(self, issuer: str, context: str, client_id: str, deployment_id: str, title: str,
                    memberships_url: str, lineitems_url: str, scopes: list[str]) -> None:
        with self.store.tx() as t:
            t.execute("INSERT INTO lti_contexts (issuer, context, client_id, deployment_id, title, memberships_url, "
                      "lineitems_url, scopes, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (issuer, "
                      "context) DO UPDATE SET client_id = excluded.client_id, deployment_id = excluded.deployment_id, "
                      "title = excluded.title, memberships_url = CASE WHEN excluded.memberships_url != '' THEN "
                      "excluded.memberships_url ELSE memberships_url END, lineitems_url = CASE WHEN "
                      "excluded.lineitems_url != '' THEN excluded.lineitems_url ELSE lineitems_url END, "
                      "scopes = CASE WHEN excluded.lineitems_url != '' THEN excluded.scopes ELSE scopes END, "
                      "updated = excluded.updated",
                      (issuer, context, client_id, deployment_id, title, memberships_url, lineitems_url,
                       json.dumps(scopes), time.time()))

    def context(self, issuer: str, context: str) -> Context | None:
        row = self.store.db.execute(f"SELECT {_CONTEXT_COLS} FROM lti_contexts WHERE issuer = ? AND context = ?",
                                    (issuer, context)).fetchone()
        return _context(row) if row else None

    def contexts(self) -> list[Context]:
        return [_context(r) for r in self.store.db.execute(
            f"SELECT {_CONTEXT_COLS} FROM lti_contexts ORDER BY issuer, context")]

    def synced(self, issuer: str, context: str, answer: str) -> None:
        with self.store.tx() as t:
            t.execute("UPDATE lti_contexts SET synced = ?, sync_answer = ? WHERE issuer = ? AND context = ?",
                      (time.time(), answer[:500], issuer, context))

    def put_member(self, issuer: str, context: str, person: str, role: str) -> None:
        with self.store.tx() as t:
            t.execute("INSERT INTO lti_members VALUES (?, ?, ?, ?, 'active', ?) ON CONFLICT (issuer, context, person) "
                      "DO UPDATE SET role = excluded.role, status = 'active', updated = excluded.updated",
                      (issuer, context, person, role, time.time()))

    def mark_left(self, issuer: str, context: str, staying: set[str]) -> list[str]:
        """Members of ``context`` not in ``staying`` are marked left (never deleted); returns who was marked."""
        rows = self.store.db.execute("SELECT person FROM lti_members WHERE issuer = ? AND context = ? AND "
                                     "status = 'active'", (issuer, context)).fetchall()
        gone = [str(r[0]) for r in rows if r[0] not in staying]
        with self.store.tx() as t:
            for p in gone:
                t.execute("UPDATE lti_members SET status = 'left', updated = ? WHERE issuer = ? AND context = ? AND "
                          "person = ?", (time.time(), issuer, context, p))
        return gone

    def members(self, issuer: str | None = None, context: str | None = None) -> list[tuple[str, str, str, str, str]]:
        """(issuer, context, person, role, status) per member."""
        q = "SELECT issuer, context, person, role, status FROM lti_members"
        args: list[Any] = []
        if issuer is not None:
            q += " WHERE issuer = ? AND context = ?"
            args = [issuer, context]
        return [tuple(r) for r in self.store.db.execute(q + " ORDER BY issuer, context, status, person", args)]

    # ------------------------------------------------------------------ line items
    def lineitem(self, issuer: str, context: str, assignment: str) -> str | None:
        row = self.store.db.execute("SELECT url FROM lti_lineitems WHERE issuer = ? AND context = ? AND "
                                    "assignment = ?", (issuer, context, assignment)).fetchone()
        return str(row[0]) if row else None

    def put_lineitem(self, issuer: str, context: str, assignment: str, url: str) -> None:
        with self.store.tx() as t:
            t.execute("INSERT INTO lti_lineitems VALUES (?, ?, ?, ?, ?) ON CONFLICT (issuer, context, assignment) "
                      "DO UPDATE SET url = excluded.url", (issuer, context, assignment, url, time.time()))

    def lineitems(self) -> list[tuple[str, str, str, str]]:
        return [tuple(r) for r in self.store.db.execute(
            "SELECT issuer, context, assignment, url FROM lti_lineitems ORDER BY issuer, context, assignment")]

    # ------------------------------------------------------------------ the outbox
    def last_score(self, issuer: str, context: str, assignment: str, person: str) -> Score | None:
        row = self.store.db.execute(
            f"SELECT {_SCORE_COLS} FROM lti_outbox WHERE issuer = ? AND context = ? AND assignment = ? AND person = ? "
            "ORDER BY id DESC LIMIT 1", (issuer, context, assignment, person)).fetchone()
        return Score(*row) if row else None

    def add_score(self, s: Score) -> int:
        """Queue a score; older unsent scores of the same person and line item are superseded (only the newest
        state is worth posting)."""
        with self.store.tx() as t:
            t.execute("UPDATE lti_outbox SET state = 'superseded' WHERE issuer = ? AND context = ? AND assignment = ? "
                      "AND person = ? AND state IN ('pending', 'failed')", (s.issuer, s.context, s.assignment,
                                                                           s.person))
            cur = t.execute(
                "INSERT INTO lti_outbox (issuer, context, assignment, person, sub, score_given, score_maximum, "
                "activity, grading, comment, timestamp, state, tries, next_try, answer, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, '', ?)",
                (s.issuer, s.context, s.assignment, s.person, s.sub, s.score_given, s.score_maximum, s.activity,
                 s.grading, s.comment, s.timestamp, s.next_try, s.created))
            return int(cur.lastrowid or 0)

    def due(self, now: float) -> list[Score]:
        return [Score(*r) for r in self.store.db.execute(
            f"SELECT {_SCORE_COLS} FROM lti_outbox WHERE state IN ('pending', 'failed') AND next_try <= ? "
            "ORDER BY id", (now,))]

    def next_due(self) -> float | None:
        row = self.store.db.execute("SELECT MIN(next_try) FROM lti_outbox WHERE state IN ('pending', 'failed')") \
            .fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def score_sent(self, sid: int, answer: str) -> None:
        with self.store.tx() as t:
            t.execute("UPDATE lti_outbox SET state = 'sent', sent = ?, answer = ?, tries = tries + 1 "
                      "WHERE id = ? AND state IN ('pending', 'failed')", (time.time(), answer[:500], sid))

    def score_failed(self, sid: int, answer: str, next_try: float) -> None:
        with self.store.tx() as t:
            t.execute("UPDATE lti_outbox SET state = 'failed', answer = ?, tries = tries + 1, next_try = ? "
                      "WHERE id = ? AND state IN ('pending', 'failed')", (answer[:500], next_try, sid))

    def scores(self, assignment: str | None = None, limit: int = 500) -> list[Score]:
        """The newest row per person and line item (what the dashboard shows), newest first."""
        where = " AND o.assignment = ?" if assignment else ""
        return [Score(*r) for r in self.store.db.execute(
            f"SELECT {', '.join('o.' + c for c in _SCORE_COLS.split(', '))} FROM lti_outbox o WHERE o.id = "
            "(SELECT MAX(id) FROM lti_outbox i WHERE i.issuer = o.issuer AND i.context = o.context AND "
            f"i.assignment = o.assignment AND i.person = o.person){where} ORDER BY o.id DESC LIMIT ?",
            ([assignment] if assignment else []) + [limit])]

    def retry_now(self, assignment: str) -> int:
        with self.store.tx() as t:
            return t.execute("UPDATE lti_outbox SET next_try = ? WHERE assignment = ? AND state IN ('pending', "
                             "'failed')", (time.time(), assignment)).rowcount

    def all_scores(self) -> list[Score]:
        return [Score(*r) for r in self.store.db.execute(f"SELECT {_SCORE_COLS} FROM lti_outbox ORDER BY id")]
