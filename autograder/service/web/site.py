"""The web tier's shared state: who is calling, the view of a submission, the pages' renderer, the guards.

Every route that names a submission checks that it is the caller's own (or
that the caller is staff) and answers 404 otherwise, exactly as for an id
that does not exist (``Service.own``). Pages are Jinja2 templates with
autoescape on; the feedback inside them is ``report.feedback_page``'s, which
escapes every student-controlled string itself. A strict
Content-Security-Policy (scripts from this origin only, images from this
origin or data: URLs) means even a string that escaped both could run nothing
and load nothing from elsewhere.

State-changing page requests carry the session's CSRF token (a form field,
or the ``X-CSRF-Token`` header for the cookie-signed API); Bearer calls carry
no ambient credential, so they need none.
"""


from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
import tempfile
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from autograder.errors import RequestRefused as Refused
from autograder.printable import printable
from autograder.report.view import score_text, time_text
from autograder.results import SubmissionResult
from autograder.service import exports, policy
from autograder.service.blobs import Blobs
from autograder.service.config import Policy, ServiceConfig
from autograder.service.grading import GradingPool
from autograder.service.ledger import Ledger, adjustments_of
from autograder.service.store import Person, ServiceStore, Submission, disk_full
from autograder.service.uploads import NotebookBounds, NotebookReader
from autograder.service.web import middleware

HERE = Path(__file__).resolve().parent.parent  # autograder/service: its templates/ and static/
COOKIE = "tg_session"
CSP = middleware.CSP  # one definition: the middleware sets it on every response
FILENAME_CAP = 120
SSE_SECONDS = 900.0
SERVICE_CSS = """
nav { display: flex; gap: 1rem; align-items: center; border-bottom: 1px solid #ddd; padding-bottom: .5rem; }
nav form { margin-left: auto; } .status { font-weight: 600; } .notice { background: #fff8c5; padding: .5rem; }
label { display: block; margin: .4rem 0 .2rem; } input, select, button { font-size: 1rem; }
button:focus, a:focus, input:focus, select:focus { outline: 3px solid #0969da; outline-offset: 2px; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; } .actions form { display: inline; }
.actions label { display: inline; } .filters { display: flex; flex-wrap: wrap; gap: .2rem .8rem; align-items: end; }
.filters label { margin: 0; } .pages { display: flex; gap: 1rem; margin: .5rem 0; }
.flag.reviewed { background: #dcfce7; } tr[aria-current] td { background: #f4f8ff; }
"""


@dataclass
class Caller:
    person: Person
    csrf: str | None  # the session's CSRF token; None for a Bearer call


class RateLimiter:
    """At most ``limit`` events per key in any 60 s (a sliding window, in memory: a restart forgets it)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.events: dict[str, deque[float]] = defaultdict(deque)

    def hit(self, key: str) -> int | None:
        """Count one event; the seconds to wait when over the limit, else None."""
        now = time.monotonic()
        q = self.events[key]
        while q and q[0] < now - 60:
            q.popleft()
        if len(q) >= self.limit:
            return max(1, int(q[0] + 60 - now) + 1)
        q.append(now)
        return None


POLL_MAX_S = 5.0  # the longest a status reply asks a client to wait before its next poll


@dataclass
class View:
    """What a student (or staff) is shown of one submission: one view-model for the API, the SSE and the page."""

    submission: Submission
    status: str  # queued | running | graded | error
    position: int
    result_id: int | None  # the result shown (its JSON is read only for pages and feedback: ``Service.result``)
    score: float | None
    max_score: float | None
    suites: str  # whose results these are: hidden | public
    needs_ta: bool
    hidden_note: str  # why the hidden tests' results are not shown yet ("" when they are)
    wait_s: int = 0  # while queued: about how long until it is graded, at the recent pace (0: not queued)
    waiting_for: str = ""  # while queued with no worker to take it: what it waits for (a GPU worker)
    note: str = ""  # how it was graded where that differs from what was asked (a CPU fallback)

    @property
    def poll_s(self) -> float:
        """When to ask again: at once-a-second pace while it runs or is near the front, less often far back in
        the queue (a twentieth of the wait, at most POLL_MAX_S), never once it is done (0). A class of 300
        polling every second kept a core of the web tier busy in a burst, taken from the graders (issue 45)."""
        if self.status in ("graded", "error"):
            return 0.0
        if self.status != "queued" or self.waiting_for:
            return 1.0 if not self.waiting_for else POLL_MAX_S
        return float(min(POLL_MAX_S, max(1.0, self.wait_s / 20)))

    def api(self, url: str) -> dict[str, Any]:
        return {"id": self.submission.id, "status": self.status, "score": self.score, "max_score": self.max_score,
                "position": self.position, "url": url, "suites": self.suites, "wait_s": self.wait_s,
                "waiting_for": self.waiting_for, "note": self.note, "poll_s": self.poll_s}


class Service:
    """The web tier's state: config, store, blobs, the grading pool, the limiters, the templates."""

    def __init__(self, cfg: ServiceConfig, store: ServiceStore, blobs: Blobs, pool: GradingPool) -> None:
        self.cfg, self.store, self.blobs, self.pool = cfg, store, blobs, pool
        self.lti: Any = None  # service.lti.tool.LtiTool, set by command.open_service
        self.per_address = RateLimiter(cfg.requests_per_minute)
        self.per_student = RateLimiter(cfg.submissions_per_minute)
        self.notebooks = NotebookReader(cfg.parses_at_once, NotebookBounds(max_text_bytes=cfg.upload_kb * 1024))
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                      undefined=jinja2.StrictUndefined)
        self.env.filters["when"] = self.when
        self.env.filters["score"] = score_text
        self.env.filters["duration"] = duration
        self.ledger = Ledger(store)
        self._similar: dict[str, tuple[frozenset[tuple[str, str]], frozenset[str]]] = {}

    def when(self, ts: float | dt.datetime | None, assignment: str | None = None) -> str:
        """A time as every page shows it: in ``assignment``'s time zone (its name said); "" for none."""
        if ts is None:
            return ""
        p = self.cfg.policy(assignment) if assignment else None
        return time_text(ts, (p or self.cfg.assignments[0]).timezone)

    # ------------------------------------------------------------------ who is calling
    def caller(self, request: Request) -> Caller | None:
        auth = request.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            p = self.store.person_for_token(auth[7:].strip())
            return Caller(p, None) if p else None
        sid = request.cookies.get(COOKIE)
        if sid:
            got = self.store.session(sid)
            if got:
                return Caller(got[0], got[1])
        return None

    def need(self, request: Request, *, staff: bool = False) -> Caller:
        c = self.caller(request)
        if c is None and not request.url.path.startswith("/api/"):
            raise Refused(401, "you are not signed in: open your personal sign-in link (from your email, or from "
                               "course staff); a link that expired or was revoked needs a new one from staff")
        if c is None:
            raise Refused(401, "not signed in: use your personal link, or send `Authorization: Bearer TOKEN` "
                               "(a token that expired or was revoked is refused too; ask staff for a new link)")
        if staff and not c.person.staff:
            raise Refused(403, "this page is for course staff only")
        return c

    def check_csrf(self, c: Caller, given: str | None) -> None:
        if c.csrf is not None and given != c.csrf:
            raise Refused(403, "this form is stale or came from another site (CSRF check failed): reload the page "
                               "and try again")

    def address(self, request: Request) -> str:
        return request.client.host if request.client else "?"

    # ------------------------------------------------------------------ submissions
    def policy_of(self, assignment: str | None) -> Policy:
        if not assignment:
            return self.cfg.assignments[0]
        p = self.cfg.policy(assignment)
        if p is None:
            raise Refused(404, f"no assignment {printable(assignment)[:80]!r} on this server (known: "
                               f"{', '.join(a.id for a in self.cfg.assignments)})")
        return p

    def own(self, c: Caller, sid: str) -> Submission:
        """The submission ``sid`` when the caller may see it; 404 otherwise, as for an id that does not exist."""
        sub = self.store.submission(sid) if len(sid) <= 64 else None
        if sub is None or (sub.person != c.person.id and not c.person.staff):
            raise Refused(404, "no such submission")
        return sub

    def accept(self, c: Caller, data: bytes, filename: str, assignment: str | None) -> Submission:
        """Check an upload and store it durably, or refuse it with a message; never accepted and then lost."""
        p = self.policy_of(assignment)
        name = printable(Path(filename.replace("\\", "/")).name or "upload")[:FILENAME_CAP]
        suffix = Path(name).suffix.lower()
        if suffix not in (".ipynb", ".py"):
            raise Refused(415, f"{name}: upload a notebook (.ipynb) or a Python file (.py)")
        if not data.strip():
            raise Refused(400, f"{name}: the file is empty")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(400, f"{name}: not UTF-8 text; save it again from Jupyter or your editor") from None
        if suffix == ".ipynb":
            self.notebooks.check(data, text, name)  # bounded first, a few at a time (uploads.py)
        self._may_submit(c, p)  # at once, before the file is written: most refusals cost no disk
        deadline = policy.deadline_for(p, c.person.id, self.store)
        now = time.time()
        suites = ["hidden"]
        if p.hide_hidden_until_deadline and deadline is not None and now < deadline.timestamp():
            suites = ["public", "hidden"]
        digest = hashlib.sha256(data).hexdigest()

        def first() -> None:
            """Inside the insert's BEGIN IMMEDIATE: the same checks again (no concurrent upload can pass them
            between the check and the insert), then the file, on disk before the row is committed."""
            self._may_submit(c, p)
            self.blobs.put(data)
        try:
            sid = self.store.add_submission(c.person.id, p.id, digest, suffix[1:], name, len(data),
                                            policy.late_days(deadline, now), suites, first=first)
        except (OSError, sqlite3.Error) as e:
            if not disk_full(e):
                raise
            raise Refused(507, "the server's disk is full, so nothing was submitted: try again later (the "
                               "service's health check tells staff)", 300) from None
        self.pool.wake()
        sub = self.store.submission(sid)
        assert sub is not None
        return sub

    def count_upload(self, c: Caller) -> None:
        """Count an upload against the student's per-minute limit before its body is read: refused uploads
        count too (a malformed or oversize one costs the server as much as any)."""
        wait_s = self.per_student.hit(c.person.id)
        if wait_s:
            raise Refused(429, f"too many uploads in a minute: try again in {wait_s} s (nothing was submitted)",
                          wait_s)

    def _may_submit(self, c: Caller, p: Policy) -> None:
        """The assignment's rules and the queue's bounds for this student now; refuses by raising."""
        refused = policy.refusal(p, c.person.id, self.store)
        if refused:
            raise Refused(refused.status, refused.message, refused.retry_after)
        mine = self.store.waiting_of(c.person.id)
        if mine >= self.cfg.student_queue_limit:  # nobody fills the shared queue for everyone else
            wait = max(5, int(self.pool.seconds_per_job()))
            raise Refused(429, f"you have {mine} submission(s) waiting to be graded, the most one student may have "
                               f"at once: upload again once one has its feedback (nothing was submitted)", wait)
        waiting = self.store.waiting()
        if waiting >= self.cfg.queue_limit:
            wait = self.pool.retry_after(waiting)
            raise Refused(503, f"the grader is busy, try again in {wait} s (nothing was submitted)", wait)

    def view(self, sub: Submission, viewer: Person) -> View:
        p = self.policy_of(sub.assignment)
        deadline = policy.deadline_for(p, sub.person, self.store)
        hidden_ok = viewer.staff or policy.hidden_visible(p, deadline)
        jobs = self.store.jobs_of(sub.id)
        suites = "hidden" if hidden_ok or not any(j.suites == "public" for j in jobs) else "public"
        note = "" if hidden_ok else (f"The hidden tests' results are shown after the deadline "
                                     f"({policy.when(deadline)})." if deadline else "")
        mine = [j for j in jobs if j.suites == suites]
        done = [r for r in self.store.result_summaries(sub.id) if r[1] == suites]
        job = mine[-1] if mine else None
        r = done[-1] if done else None
        if suites == "hidden" and not hidden_ok:
            r = None  # graded, but not shown before the deadline
        if job is None or job.state != "done":
            status = job.state if job else "queued"
        else:
            status = "error" if r is not None and r[2] == "internal_error" else "graded"
        position = self.store.position(job) if job else 0
        queued = status == "queued"
        wait = round(self.pool.estimated_wait(sub.assignment, position)) if queued else 0
        waiting_for = "a grading worker with a GPU (staff are shown why)" \
            if queued and self.pool.blocked(sub.assignment) else ""
        score = r[3] if r else None
        if r is not None and suites == "hidden" and r[2] != "internal_error":
            changes = adjustments_of(self.store, [sub.id]).get(sub.id, [])
            if changes:  # staff's adjustments count on the newest hidden result (the result's JSON read only then)
                score = policy.total_after(r[3], self.store.result_dict(r[0]), changes)
        return View(sub, status, position, r[0] if r else None, score, r[4] if r else None, suites,
                    bool(r and r[5]), note, wait, waiting_for, job.note if job else "")

    def result(self, v: View) -> SubmissionResult | None:
        return self.store.submission_result(v.result_id) if v.result_id is not None else None

    def url(self, sub: Submission) -> str:
        return f"{self.cfg.url()}/submissions/{sub.id}"

    # ------------------------------------------------------------------ pages
    def page(self, request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        c = self.caller(request)
        html = self.env.get_template(template).render(me=c.person if c else None, csrf=c.csrf if c else "",
                                                      **ctx)
        return HTMLResponse(html, status_code=status)

    def class_report(self, aid: str, rows: list[exports.Row]) -> dict[str, Any]:
        """``class_report_html``'s arguments, as the batch gives them: the counting attempts, each linked to
        its feedback page, with names, the flags (blank, duplicate, late) and pairs of near-identical code."""
        from autograder.batch.inputs import Entry
        from autograder.batch.review import ClassReview, review_class

        a = self.pool.assignments[aid]
        results, entries, pages, problems = [], [], {}, []
        with tempfile.TemporaryDirectory(prefix="tg-review-") as tmp:
            for r in rows:
                sub = self.store.submission(r.submission) if r.assignment == aid and r.result is not None else None
                if sub is None or r.result is None:
                    continue
                r.result.student = r.person.id
                results.append(r.result)
                pages[r.person.id] = f"/submissions/{sub.id}"
                # the review reads a file by its suffix, as the batch's inputs have one; a blob has none
                named = Path(tmp) / f"{sub.sha256}.{sub.kind}"
                if not named.exists():
                    named.symlink_to(self.blobs.path(sub.sha256))
                entries.append(Entry(path=named, source=sub.filename, submission=sub.id,
                                     student=r.person.id, sha256=sub.sha256, order=(),
                                     late=f"{r.late_days} day(s) late" if r.late_days else ""))
            try:
                review = review_class(a, entries)
            except Exception as e:  # noqa: BLE001 - a failed review costs its flags and pairs, never the report
                review = ClassReview()
                problems.append(f"the review of the class (blank, duplicate, late, similar code) failed: "
                                f"{printable(type(e).__name__)}: {printable(str(e))[:300]}")
        by_student = {e.student: e.submission for e in entries}
        key = frozenset((e.student, e.sha256) for e in entries)
        self._similar[aid] = (key, frozenset(by_student[side.student] for pair in review.pairs
                                             for side in (pair.a, pair.b) if side.student in by_student))
        return {"results": results, "title": a.title, "exercise_ids": a.ids, "problems": problems,
                "names": {r.person.id: r.person.name for r in rows}, "attention": review.attention,
                "pairs": review.pairs, "link": lambda res: pages.get(res.student, "/staff")}

    def similar(self, aid: str, rows: list[exports.Row]) -> frozenset[str]:
        """The counting submissions of ``aid`` that the class review pairs as near-identical code (reviewed
        again only when some student's counting attempt changed)."""
        key = frozenset((r.person.id, s.sha256) for r in rows if r.assignment == aid and r.result is not None
                        for s in [self.store.submission(r.submission)] if s)
        cached = self._similar.get(aid)
        if cached is None or cached[0] != key:
            self.class_report(aid, rows)
        return self._similar[aid][1]

    def history(self, sub: Submission, viewer: Person) -> list[dict[str, Any]]:
        """Every result of ``sub`` the viewer may see, oldest first: when, why (submitted, a regrade by whom,
        the tests changed), the score, and the score before it."""
        v = self.view(sub, viewer)
        if v.result_id is None:
            return []  # none yet, or the hidden tests' results are not shown before the deadline
        out: list[dict[str, Any]] = []
        prev_version, prev_score = None, None
        # the reasons staff gave, in the order they asked (their regrades are graded in that order)
        reasons = iter([a.reason for a in reversed(self.ledger.audit(submission=sub.id)) if a.action == "regrade"])
        for h in self.ledger.results(sub.id, v.suites):
            why = "submitted" if h.reason == "submit" else h.reason.replace("regrade by", "regraded by")
            if h.reason.startswith("regrade by") and (said := next(reasons, "")):
                why += f": {said}"
            if prev_version is not None and h.suite_version != prev_version:
                why += "; the tests changed since the result before"
            shown = h.status != "internal_error"
            out.append({"id": h.id, "when": h.created, "why": why, "score": h.total if shown else None,
                        "max": h.max_total, "before": prev_score, "status": h.status,
                        "current": h.id == v.result_id})
            prev_version, prev_score = h.suite_version, (h.total if shown else prev_score)
        return out

    def home_context(self, c: Caller) -> dict[str, Any]:
        out = []
        deadlines = {p.id: policy.deadline_for(p, c.person.id, self.store) for p in self.cfg.assignments}
        # before the deadline while the hidden results are hidden, nothing may hint at them
        decided = {p.id: c.person.staff or policy.hidden_visible(p, deadlines[p.id]) for p in self.cfg.assignments}
        by_aid, bank = policy.course_standings(self.cfg, self.store, c.person.id, hidden=decided)
        for p in self.cfg.assignments:
            out.append({"policy": p, "decided": decided[p.id],
                        "title": self.pool.assignments[p.id].title if p.id in self.pool.assignments else p.id,
                        "rules": policy.rules(p, deadlines[p.id], bank.left),
                        "refusal": policy.refusal(p, c.person.id, self.store),
                        "history": [(st, self.view(st.submission, c.person)) for st in reversed(by_aid[p.id])]})
        return {"assignments": out, "late_days": bank}


def duration(seconds: float) -> str:
    """A wait as people say it: "40 s", "12 min"."""
    return f"{round(seconds)} s" if seconds < 90 else f"{round(seconds / 60)} min"




def refused(request: Request, e: Refused, svc: Service) -> Response:
    headers = {"Retry-After": str(e.retry_after)} if e.retry_after else None
    if request.url.path.startswith("/api/") or request.url.path == "/healthz":
        return JSONResponse({"error": e.message}, status_code=e.status, headers=headers)
    resp = svc.page(request, "message.html", status=e.status, title="Not possible", message=e.message)
    if headers:
        resp.headers.update(headers)
    return resp


async def read_upload(request: Request, svc: Service) -> tuple[bytes, str, dict[str, str]]:
    """The multipart body, read with a cap: (file bytes, its name, the other fields)."""
    cap = svc.cfg.upload_kb * 1024
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > cap + 65536:
        raise Refused(413, f"the file is larger than the limit of {svc.cfg.upload_kb} KB")
    size, chunks = 0, []
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap + 65536:
            raise Refused(413, f"the file is larger than the limit of {svc.cfg.upload_kb} KB")
        chunks.append(chunk)
    request._body = b"".join(chunks)
    try:
        form = await request.form(max_files=1, max_fields=8, max_part_size=4096)
    except Exception:  # noqa: BLE001 - python-multipart's errors all mean a malformed form
        raise Refused(400, "send the file as multipart/form-data in a field named `file`") from None
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise Refused(400, "send the file as multipart/form-data in a field named `file`")
    data = await upload.read(cap + 1)
    if len(data) > cap:
        raise Refused(413, f"the file is larger than the limit of {svc.cfg.upload_kb} KB")
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    return data, upload.filename or "upload", fields


Handler = Callable[[Request], Awaitable[Response]]


def guarded(svc: Service, handler: Handler) -> Handler:
    """``handler`` behind the per-address limit, with every refusal answered in the caller's words (a page,
    or JSON under /api/); the security headers are the middleware's (``middleware.SecurityHeaders``)."""
    async def endpoint(request: Request) -> Response:
        try:
            path = request.url.path
            if path not in ("/healthz",):
                wait = svc.per_address.hit(svc.address(request))
                if wait:
                    raise Refused(429, f"too many requests from this address: try again in {wait} s", wait)
            resp = await handler(request)
        except Refused as e:
            resp = refused(request, e, svc)
        return resp
    return endpoint
