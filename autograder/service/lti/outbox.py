"""Scores to the LMS: each change of a counting score posted once, retried with backoff, surviving a restart.

A sweep compares, for every student of every LMS context that has a line item
for an assignment, what the gradebook should say now (the counting attempt,
staff's adjustments and the late penalty applied, as ``policy.standings``
decides for the CSV exports too; a sweep runs when a result, a job, an
extension, an adjustment or a membership changed, and once a minute)
with the last row queued for them; a difference is a new outbox row. The
poster sends due rows in order: a success marks the row sent with the LMS's
answer; a failure (an error status, no answer within ``http_timeout``) keeps it
and tries again after 1, 2, 4, ... s, up to ``retry_max_seconds``. A newer
score of the same person and line item supersedes an unsent older one.

Rows are in the store, so a killed service resumes where it stopped: a row
already answered is never posted again. A row cut off mid-post (no answer
recorded) is posted again with the same timestamp, which AGS platforms treat as
the same score (a score whose timestamp is not newer than the last is
ignored), so the gradebook never counts it twice.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.errors import LmsError
from autograder.service import policy
from autograder.service.config import Policy, ServiceConfig
from autograder.service.lti.config import Platform
from autograder.service.lti.platform import PlatformClient
from autograder.service.lti.tables import Context, LtiTables, Score
from autograder.service.store import ServiceStore

SWEEP_SECONDS = 0.5


@dataclass
class Wanted:
    """What the LMS's gradebook should say of one person's assignment now."""

    score_given: float | None
    score_maximum: float
    activity: str  # AGS activityProgress
    grading: str  # AGS gradingProgress
    comment: str

    def same(self, s: Score) -> bool:
        return (s.score_given, s.score_maximum, s.activity, s.grading, s.comment) == (
            self.score_given, self.score_maximum, self.activity, self.grading, self.comment)


def timestamp() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _changes(db: sqlite3.Connection, table: str) -> Any:
    """The newest row of a table another module may not have made yet (staff's score adjustments)."""
    try:
        return db.execute(f"SELECT MAX(rowid), COUNT(*) FROM {table}").fetchone()  # noqa: S608 - a constant name
    except sqlite3.OperationalError:
        return None


class Outbox:
    def __init__(self, cfg: ServiceConfig, store: ServiceStore, tables: LtiTables, client: PlatformClient,
                 platform_of: Callable[[str, str], Platform | None], maxima: Callable[[str], tuple[str, float]],
                 base_url: str) -> None:
        self.cfg, self.store, self.tables, self.client = cfg, store, tables, client
        self.platform_of, self.maxima, self.base_url = platform_of, maxima, base_url
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._sig: tuple | None = None

    # ------------------------------------------------------------------ what the gradebook should say
    def wanted(self, p: Policy, person: str) -> Wanted | None:
        subs = self.store.submissions(person, p.id)
        if not subs:
            return None
        title, maximum = self.maxima(p.id)
        pending = any(j.state != "done" and j.suites == "hidden" for s in subs for j in self.store.jobs_of(s.id))
        standings = policy.course_standings(self.cfg, self.store, person)[0][p.id]  # with the late-day bank
        counting = next((st for st in standings if st.counts), None)
        if counting is not None and counting.result is not None:
            maximum = counting.result.max_total
        shown = policy.hidden_visible(p, policy.deadline_for(p, person, self.store))
        last = subs[-1] if pending or counting is None else counting.submission
        link = f"{self.base_url}/submissions/{last.id}"
        if not shown:
            return Wanted(None, maximum, "Submitted", "Pending",
                          f"{title}: submitted; the score is shown after the deadline. Feedback: {link}")
        if pending:
            score = counting.score if counting is not None else None
            return Wanted(score, maximum, "Submitted", "Pending", f"{title}: being graded. Feedback: {link}")
        if counting is None or counting.score is None:
            return Wanted(None, maximum, "Submitted", "PendingManual",
                          f"{title}: the grader failed on this attempt; course staff will grade it. {link}")
        return Wanted(counting.score, maximum, "Completed", "FullyGraded",
                      f"{title}: {counting.score:g} of {maximum:g} points. Feedback: {link}")

    def _pairs(self, assignment: str | None = None) -> list[tuple[Context, str, str, str]]:
        """(context, assignment, person, sub) for each student of each context with a line item for it."""
        out = []
        contexts = {(c.issuer, c.context): c for c in self.tables.contexts()}
        for issuer, context, aid, _url in self.tables.lineitems():
            c = contexts.get((issuer, context))
            if c is None or (assignment is not None and aid != assignment) or self.cfg.policy(aid) is None:
                continue
            for _i, _c, person, role, status in self.tables.members(issuer, context):
                who = self.tables.sub_of(person)
                if role == "student" and status == "active" and who and who[0] == issuer:
                    out.append((c, aid, person, who[1]))
        return out

    def sweep(self, *, force_assignment: str | None = None) -> int:
        """Queue a row for each score that changed (every score of ``force_assignment``); returns how many."""
        db = self.store.db
        sig = (db.execute("SELECT MAX(id) FROM results").fetchone()[0],
               db.execute("SELECT MAX(id), SUM(state != 'done') FROM jobs").fetchone(),
               db.execute("SELECT COUNT(*), MAX(updated) FROM lti_members").fetchone(),
               db.execute("SELECT COUNT(*) FROM lti_lineitems").fetchone()[0],
               db.execute("SELECT COUNT(*) FROM extensions").fetchone()[0], _changes(db, "adjustments"),
               int(time.time() // 60))
        if force_assignment is None and sig == self._sig:
            return 0
        n = 0
        for c, aid, person, sub in self._pairs(force_assignment):
            p = self.cfg.policy(aid)
            assert p is not None
            w = self.wanted(p, person)
            if w is None:
                continue
            last = self.tables.last_score(c.issuer, c.context, aid, person)
            if last is not None and w.same(last) and force_assignment is None:
                continue
            now = time.time()
            self.tables.add_score(Score(0, c.issuer, c.context, aid, person, sub, w.score_given, w.score_maximum,
                                        w.activity, w.grading, w.comment, timestamp(), "pending", 0, now, "", now,
                                        None))
            n += 1
        self._sig = sig
        if n:
            self._wake.set()
        return n

    # ------------------------------------------------------------------ posting
    def post(self, s: Score) -> None:
        c = self.tables.context(s.issuer, s.context)
        plat = self.platform_of(s.issuer, c.client_id) if c else None
        try:
            if c is None or plat is None:
                raise LmsError("the LMS is no longer registered with this tool (its [[lti.platforms]] entry "
                                    "was removed)")
            url = self.tables.lineitem(s.issuer, s.context, s.assignment)
            if not url:
                if not c.lineitems_url:
                    raise LmsError("the LMS gave no line items service for this course: grades cannot be "
                                        "passed back (enable Assignment and Grade Services for the tool)")
                title, maximum = self.maxima(s.assignment)
                url = self.client.find_or_create_lineitem(plat, c.lineitems_url, s.assignment, title, maximum)
                self.tables.put_lineitem(s.issuer, s.context, s.assignment, url)
            body = {"userId": s.sub, "scoreMaximum": s.score_maximum, "timestamp": s.timestamp,
                    "activityProgress": s.activity, "gradingProgress": s.grading, "comment": s.comment}
            if s.score_given is not None:
                body["scoreGiven"] = s.score_given
            answer = self.client.post_score(plat, url, body)
        except LmsError as e:
            wait = min(self.cfg.lti.retry_max_seconds, 2.0 ** min(s.tries, 20))
            self.tables.score_failed(s.id, e.answer, time.time() + wait)
            return
        self.tables.score_sent(s.id, answer)

    def post_due(self) -> int:
        n = 0
        for s in self.tables.due(time.time()):
            if self._stop.is_set():
                break
            self.post(s)
            n += 1
        return n

    def resend(self, assignment: str) -> int:
        """Staff asked: post every score of ``assignment`` again (new rows, new timestamps), and retry now."""
        n = self.sweep(force_assignment=assignment)
        self.tables.retry_now(assignment)
        self._wake.set()
        return n

    # ------------------------------------------------------------------ the thread
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="lti-outbox", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self.cfg.lti.http_timeout + 5)

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.sweep()
                self.post_due()
            except Exception as e:  # noqa: BLE001 - the outbox must outlive any one bad row; the row stays
                print(f"torchgrader serve: the LTI outbox failed a round ({type(e).__name__}: {e}); it goes on",
                      file=sys.stderr, flush=True)
            self._wake.wait(SWEEP_SECONDS)
            self._wake.clear()
