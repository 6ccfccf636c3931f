"""The service's routes: the pages (signed-in cookie) and the JSON API (``Authorization: Bearer TOKEN``).

Every route that names a submission checks that it is the caller's own (or
that the caller is staff) and answers 404 otherwise, exactly as for an id
that does not exist. Pages are Jinja2 templates with autoescape on; the
feedback inside them is ``report.feedback_page``'s, which escapes every
student-controlled string itself. A strict Content-Security-Policy (scripts
from this origin only, images from this origin or data: URLs) means even a
string that escaped both could run nothing and load nothing from elsewhere.

State-changing page requests carry the session's CSRF token (a form field,
or the ``X-CSRF-Token`` header for the cookie-signed API); Bearer calls carry
no ambient credential, so they need none.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import time
import warnings
from collections import defaultdict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
import nbformat
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from autograder.errors import RequestRefused as Refused
from autograder.printable import printable
from autograder.report.feedback_page import feedback_body
from autograder.report.html import CSS
from autograder.report.view import cause_heading, cause_tests, view
from autograder.results import SubmissionResult
from autograder.service import exports, policy
from autograder.service.blobs import Blobs
from autograder.service.config import Policy, ServiceConfig
from autograder.service.grading import GradingPool
from autograder.service.roster import issue_links
from autograder.service.store import Person, ServiceStore, Submission

HERE = Path(__file__).resolve().parent
COOKIE = "tg_session"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
FILENAME_CAP = 120
SSE_SECONDS = 900.0
SERVICE_CSS = """
nav { display: flex; gap: 1rem; align-items: center; border-bottom: 1px solid #ddd; padding-bottom: .5rem; }
nav form { margin-left: auto; } .status { font-weight: 600; } .notice { background: #fff8c5; padding: .5rem; }
label { display: block; margin: .4rem 0 .2rem; } input, select, button { font-size: 1rem; }
button:focus, a:focus, input:focus, select:focus { outline: 3px solid #0969da; outline-offset: 2px; }
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

    def api(self, url: str) -> dict[str, Any]:
        return {"id": self.submission.id, "status": self.status, "score": self.score, "max_score": self.max_score,
                "position": self.position, "url": url, "suites": self.suites}


class Service:
    """The web tier's state: config, store, blobs, the grading pool, the limiters, the templates."""

    def __init__(self, cfg: ServiceConfig, store: ServiceStore, blobs: Blobs, pool: GradingPool) -> None:
        self.cfg, self.store, self.blobs, self.pool = cfg, store, blobs, pool
        self.lti: Any = None  # service.lti.tool.LtiTool, set by command.open_service
        self.per_address = RateLimiter(cfg.requests_per_minute)
        self.per_student = RateLimiter(cfg.submissions_per_minute)
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                      undefined=jinja2.StrictUndefined)
        self.env.filters["when"] = _when

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
            try:
                with warnings.catch_warnings():  # nbformat's advice on cell ids is for authors, not this log
                    warnings.simplefilter("ignore")
                    nbformat.validate(nbformat.reads(text, as_version=4))
            except Exception as e:  # noqa: BLE001 - nbformat raises several kinds; each means "not a notebook"
                why = printable(str(e).splitlines()[0] if str(e) else type(e).__name__)[:200]
                raise Refused(400, f"{name}: not a readable notebook ({why}); save it again from Jupyter "
                                   "(File > Save) and upload the .ipynb file") from None
        refused = policy.refusal(p, c.person.id, self.store)
        if refused:
            raise Refused(refused.status, refused.message, refused.retry_after)
        waiting = self.store.waiting()
        if waiting >= self.cfg.queue_limit:
            wait = self.pool.retry_after(waiting)
            raise Refused(503, f"the grader is busy, try again in {wait} s (nothing was submitted)", wait)
        wait_s = self.per_student.hit(c.person.id)
        if wait_s:
            raise Refused(429, f"too many uploads in a minute: try again in {wait_s} s", wait_s)
        digest = self.blobs.put(data)
        deadline = policy.deadline_for(p, c.person.id, self.store)
        now = time.time()
        suites = ["hidden"]
        if p.hide_hidden_until_deadline and deadline is not None and now < deadline.timestamp():
            suites = ["public", "hidden"]
        sid = self.store.add_submission(c.person.id, p.id, digest, suffix[1:], name, len(data),
                                        policy.late_days(deadline, now), suites)
        self.pool.wake()
        sub = self.store.submission(sid)
        assert sub is not None
        return sub

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
        return View(sub, status, self.store.position(job) if job else 0, r[0] if r else None, r[3] if r else None,
                    r[4] if r else None, suites, bool(r and r[5]), note)

    def result(self, v: View) -> SubmissionResult | None:
        return SubmissionResult.from_dict(self.store.result_dict(v.result_id)) if v.result_id is not None else None

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
        for r in rows:
            sub = self.store.submission(r.submission) if r.assignment == aid and r.result is not None else None
            if sub is None or r.result is None:
                continue
            r.result.student = r.person.id
            results.append(r.result)
            pages[r.person.id] = f"/submissions/{sub.id}"
            entries.append(Entry(path=self.blobs.path(sub.sha256), source=sub.filename, submission=sub.id,
                                 student=r.person.id, sha256=sub.sha256, order=(),
                                 late=f"{r.late_days} day(s) late" if r.late_days else ""))
        try:
            review = review_class(a, entries)
        except Exception as e:  # noqa: BLE001 - a failed review costs its flags and pairs, never the report
            review = ClassReview()
            problems.append(f"the review of the class (blank, duplicate, late, similar code) failed: "
                            f"{printable(type(e).__name__)}: {printable(str(e))[:300]}")
        return {"results": results, "title": a.title, "exercise_ids": a.ids, "problems": problems,
                "names": {r.person.id: r.person.name for r in rows}, "attention": review.attention,
                "pairs": review.pairs, "link": lambda res: pages.get(res.student, "/staff")}

    def home_context(self, c: Caller) -> dict[str, Any]:
        out = []
        for p in self.cfg.assignments:
            deadline = policy.deadline_for(p, c.person.id, self.store)
            out.append({"policy": p, "title": self.pool.assignments[p.id].title if p.id in self.pool.assignments
                        else p.id, "rules": policy.rules(p, deadline),
                        "refusal": policy.refusal(p, c.person.id, self.store),
                        "history": [(st, self.view(st.submission, c.person))
                                    for st in reversed(policy.standings(p, self.store, c.person.id))]})
        return {"assignments": out}


def _when(ts: float | dt.datetime | None, tz: str = "UTC") -> str:
    if ts is None:
        return ""
    d = ts if isinstance(ts, dt.datetime) else dt.datetime.fromtimestamp(ts, ZoneInfo(tz))
    return d.strftime("%Y-%m-%d %H:%M:%S %Z")


def _security_headers(resp: Response, request: Request) -> Response:
    resp.headers.setdefault("Content-Security-Policy", CSP)
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["X-Frame-Options"] = "DENY"
    if not request.url.path.startswith("/static/"):
        resp.headers["Cache-Control"] = "no-store"
    return resp


def _refused(request: Request, e: Refused, svc: Service) -> Response:
    headers = {"Retry-After": str(e.retry_after)} if e.retry_after else None
    if request.url.path.startswith("/api/") or request.url.path == "/healthz":
        return JSONResponse({"error": e.message}, status_code=e.status, headers=headers)
    resp = svc.page(request, "message.html", status=e.status, title="Not possible", message=e.message)
    if headers:
        resp.headers.update(headers)
    return resp


async def _read_upload(request: Request, svc: Service) -> tuple[bytes, str, dict[str, str]]:
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


def build_app(svc: Service, *, grade: bool = True) -> Starlette:
    """The ASGI app; with ``grade``, the grading pool is started and stopped by its lifespan."""

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                path = request.url.path
                if path not in ("/healthz",):
                    wait = svc.per_address.hit(svc.address(request))
                    if wait:
                        raise Refused(429, f"too many requests from this address: try again in {wait} s", wait)
                resp = await handler(request)
            except Refused as e:
                resp = _refused(request, e, svc)
            return _security_headers(resp, request)
        return endpoint

    # ------------------------------------------------------------------ public
    async def healthz(request: Request) -> Response:
        ok, why = svc.pool.health()
        return JSONResponse({"ready": ok, "detail": why, "queued": await run_in_threadpool(svc.store.waiting)},
                            status_code=200 if ok else 503, headers=None if ok else {"Retry-After": "10"})

    async def signin(request: Request) -> Response:
        token = request.query_params.get("token", "")
        got = await run_in_threadpool(svc.store.open_session, token, svc.cfg.session_hours) if token else None
        if got is None:
            raise Refused(401, "this sign-in link is not valid (expired, revoked, or mistyped): ask course staff "
                               "for a new one")
        sid, _ = got
        resp = svc.page(request, "signin.html", title="Signing in")
        resp.set_cookie(COOKIE, sid, max_age=int(svc.cfg.session_hours * 3600), httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")
        return resp

    async def signout(request: Request) -> Response:
        c = svc.need(request)
        form = await request.form(max_files=0, max_fields=4)
        svc.check_csrf(c, str(form.get("csrf", "")))
        sid = request.cookies.get(COOKIE)
        if sid:
            await run_in_threadpool(svc.store.close_session, sid)
        resp = RedirectResponse("/", status_code=303)
        resp.delete_cookie(COOKIE, path="/")
        return resp

    # ------------------------------------------------------------------ student pages
    async def home(request: Request) -> Response:
        c = svc.caller(request)
        if c is None:
            return svc.page(request, "welcome.html", title="torchgrader")
        ctx = await run_in_threadpool(svc.home_context, c)
        return svc.page(request, "home.html", title="Your assignments", **ctx)

    async def submit_form(request: Request) -> Response:
        c = svc.need(request)
        data, filename, fields = await _read_upload(request, svc)
        svc.check_csrf(c, fields.get("csrf"))
        sub = await run_in_threadpool(svc.accept, c, data, filename, fields.get("assignment"))
        return RedirectResponse(f"/submissions/{sub.id}", status_code=303)

    async def submission_page(request: Request) -> Response:
        c = svc.need(request)
        sub = await run_in_threadpool(svc.own, c, request.path_params["sid"])
        v = await run_in_threadpool(svc.view, sub, c.person)
        result = await run_in_threadpool(svc.result, v)
        body = feedback_body(result) if result else ""
        owner = await run_in_threadpool(svc.store.person, sub.person)
        return svc.page(request, "submission.html", title=f"Submission {sub.filename}", v=v, feedback=body,
                        result=result, owner=owner, api=f"/api/submissions/{sub.id}")

    # ------------------------------------------------------------------ API
    async def api_submit(request: Request) -> Response:
        c = svc.need(request)
        data, filename, fields = await _read_upload(request, svc)
        svc.check_csrf(c, request.headers.get("x-csrf-token"))
        sub = await run_in_threadpool(svc.accept, c, data, filename, fields.get("assignment"))
        return JSONResponse({"id": sub.id, "status": "queued", "url": svc.url(sub)}, status_code=202)

    async def api_submission(request: Request) -> Response:
        c = svc.need(request)
        sub = await run_in_threadpool(svc.own, c, request.path_params["sid"])
        v = await run_in_threadpool(svc.view, sub, c.person)
        out = v.api(svc.url(sub))
        if request.query_params.get("feedback") and v.result_id is not None:
            result = await run_in_threadpool(svc.result, v)
            assert result is not None
            out["feedback"] = _summary(result)
        return JSONResponse(out)

    async def api_list(request: Request) -> Response:
        c = svc.need(request)

        def rows() -> list[dict[str, Any]]:
            return [svc.view(s, c.person).api(svc.url(s)) | {"assignment": s.assignment, "created": s.created}
                    for s in svc.store.submissions(c.person.id)]
        return JSONResponse({"submissions": await run_in_threadpool(rows)})

    async def api_events(request: Request) -> Response:
        c = svc.need(request)
        sub = await run_in_threadpool(svc.own, c, request.path_params["sid"])

        async def events() -> Any:
            last = None
            end = time.monotonic() + SSE_SECONDS
            beat = time.monotonic()
            while time.monotonic() < end:
                v = await run_in_threadpool(svc.view, sub, c.person)
                now = v.api(svc.url(sub))
                if now != last:
                    yield f"event: status\ndata: {json.dumps(now)}\n\n"
                    last = now
                    beat = time.monotonic()
                if v.status in ("graded", "error") or await request.is_disconnected():
                    return
                if time.monotonic() - beat > 15:
                    yield ": keep-alive\n\n"
                    beat = time.monotonic()
                await asyncio.sleep(0.5)
        return StreamingResponse(events(), media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})

    # ------------------------------------------------------------------ staff
    def _rows() -> list[exports.Row]:
        return exports.counting_rows(svc.cfg, svc.store, _titles())

    def _titles() -> dict[str, str]:
        return {p.id: svc.pool.assignments[p.id].title if p.id in svc.pool.assignments else p.id
                for p in svc.cfg.assignments}

    def _csv(text: str, name: str) -> Response:
        return Response(text, media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def gradebook(request: Request) -> Response:
        svc.need(request, staff=True)
        ids = {a: svc.pool.assignments[a].ids for a in svc.pool.assignments}
        return _csv(exports.gradebook_csv(await run_in_threadpool(_rows), ids), "gradebook.csv")

    async def canvas(request: Request) -> Response:
        svc.need(request, staff=True)
        maxima = {a: svc.pool.assignments[a].max_total for a in svc.pool.assignments}
        return _csv(exports.canvas_csv(await run_in_threadpool(_rows), _titles(), maxima,
                                       {p.id: p.canvas_id for p in svc.cfg.assignments}), "canvas-import.csv")

    async def moodle(request: Request) -> Response:
        svc.need(request, staff=True)
        return _csv(exports.moodle_csv(await run_in_threadpool(_rows), _titles()), "moodle-import.csv")

    async def dashboard(request: Request) -> Response:
        svc.need(request, staff=True)

        def ctx() -> dict[str, Any]:
            rows = _rows()
            queue = [(j, svc.store.submission(j.submission)) for j in svc.store.queue()]
            counts = {p.id: len(svc.store.submissions(p.id)) for p in svc.store.people("student")}
            return {"rows": rows, "queue": queue, "slots": svc.pool.slots, "health": svc.pool.health(),
                    "counts": counts, "people": svc.store.people(), "extensions": svc.store.extensions(),
                    "assignments": svc.cfg.assignments, "titles": _titles(),
                    "needs_ta": svc.store.needs_ta()}
        return svc.page(request, "staff.html", title="Staff dashboard", **await run_in_threadpool(ctx),
                        new_link=None)

    async def student_page(request: Request) -> Response:
        c = svc.need(request, staff=True)
        pid = request.path_params["pid"]
        person = await run_in_threadpool(svc.store.person, pid)
        if person is None:
            raise Refused(404, "no such person")

        def ctx() -> list[Any]:
            return [(p, [(st, svc.view(st.submission, c.person))
                         for st in reversed(policy.standings(p, svc.store, pid))]) for p in svc.cfg.assignments]
        return svc.page(request, "student.html", title=f"History of {person.name}", person=person,
                        history=await run_in_threadpool(ctx))

    async def class_report(request: Request) -> Response:
        svc.need(request, staff=True)
        aid = request.path_params["aid"]
        if aid not in svc.pool.assignments:
            raise Refused(404, "no such assignment")
        from autograder.report.classreport import SCRIPT_CSP, class_report_html

        def html() -> str:
            return class_report_html(**svc.class_report(aid, _rows()))
        # the report is one self-contained file with its own inline <style> and its one (hashed) sorting script
        csp = CSP.replace("style-src 'self'", "style-src 'unsafe-inline'").replace(
            "script-src 'self'", f"script-src 'self' {SCRIPT_CSP}")
        return HTMLResponse(await run_in_threadpool(html), headers={"Content-Security-Policy": csp})

    async def stylesheet(request: Request) -> Response:
        return Response(CSS + SERVICE_CSS, media_type="text/css")

    async def staff_action(request: Request) -> Response:
        c = svc.need(request, staff=True)
        form = await request.form(max_files=0, max_fields=8)
        svc.check_csrf(c, str(form.get("csrf", "")))
        action = request.path_params["action"]
        f = {k: str(v) for k, v in form.items()}

        def act() -> str:
            store = svc.store
            if action == "regrade":
                scope, target = f.get("scope", ""), f.get("target", "")
                if scope == "submission":
                    subs = [s.id for s in [store.submission(target)] if s]
                elif scope == "student":
                    subs = [s.id for s in store.submissions(target)]
                elif scope == "everyone":
                    subs = [s.id for s in store.submissions(assignment=target or None)]
                else:
                    raise Refused(400, "regrade: choose one submission, one student or everyone")
                n = store.queue_regrade(subs, c.person.id)
                svc.pool.wake()
                return f"{n} submission(s) queued for regrading (their earlier results are kept)"
            if action == "extension":
                p = svc.policy_of(f.get("assignment"))
                if store.person(f.get("person", "")) is None:
                    raise Refused(404, "no such person")
                try:
                    local = dt.datetime.fromisoformat(f.get("deadline", ""))
                except ValueError:
                    raise Refused(400, "extension: give the new deadline as a date and time") from None
                when = local.replace(tzinfo=ZoneInfo(p.timezone)) if local.tzinfo is None else local
                store.set_extension(f["person"], p.id, when.timestamp(), c.person.id)
                return f"{f['person']} has until {policy.when(when)} for {p.id}"
            if action == "revoke":
                n = store.revoke(f.get("person", ""))
                return f"{n} link(s) of {f.get('person', '')} revoked; their sessions are ended"
            if action == "link":
                if store.person(f.get("person", "")) is None:
                    raise Refused(404, "no such person")
                link = issue_links(store, svc.cfg.url(), svc.cfg.link_days, only=[f["person"]])[0]
                return f"new sign-in link for {link.id}: {link.url}"
            raise Refused(404, "no such action")
        message = await run_in_threadpool(act)
        return svc.page(request, "message.html", title="Done", message=message, back="/staff")

    async def not_found(request: Request) -> Response:
        raise Refused(404, "no such page")

    routes = [
        Route("/healthz", guarded(healthz)),
        Route("/style.css", guarded(stylesheet)),
        Route("/signin", guarded(signin)),
        Route("/signout", guarded(signout), methods=["POST"]),
        Route("/", guarded(home)),
        Route("/submit", guarded(submit_form), methods=["POST"]),
        Route("/submissions/{sid}", guarded(submission_page)),
        Route("/api/submissions", guarded(api_submit), methods=["POST"]),
        Route("/api/submissions", guarded(api_list), methods=["GET"]),
        Route("/api/submissions/{sid}", guarded(api_submission)),
        Route("/api/submissions/{sid}/events", guarded(api_events)),
        Route("/api/staff/gradebook.csv", guarded(gradebook)),
        Route("/api/staff/canvas.csv", guarded(canvas)),
        Route("/api/staff/moodle.csv", guarded(moodle)),
        Route("/staff", guarded(dashboard)),
        Route("/staff/students/{pid}", guarded(student_page)),
        Route("/staff/report/{aid}", guarded(class_report)),
        Route("/staff/{action}", guarded(staff_action), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    lti = getattr(svc, "lti", None)
    if lti is not None:  # the LMS's launches, deep linking, registration and the staff's LMS page (service/lti/)
        from autograder.service.lti.routes import routes as lti_routes

        routes[-1:-1] = [Route(r.path, guarded(r.endpoint), methods=r.methods)
                         for r in lti_routes(svc, lti, COOKIE, CSP)]
    routes.append(Route("/{rest:path}", guarded(not_found)))
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if grade:
            svc.pool.start()
            if lti is not None:
                lti.start()
        try:
            yield
        finally:
            if grade:
                if lti is not None:
                    await run_in_threadpool(lti.stop)
                await run_in_threadpool(svc.pool.stop)

    return Starlette(routes=routes, lifespan=lifespan)


def _summary(r: SubmissionResult) -> list[dict[str, Any]]:
    """The feedback in plain values (for ``torchgrader submit --wait``), from the one view-model of a result.

    Per test, points and the message; a cause several tests share is sent once, in ``causes`` of the first
    exercise it costs, and each test names it (``cause``) beside what is its own (``own``). ``message`` stays
    whole, for a client that knows no causes.
    """
    v = view(r)
    full = {(e.id, t.nodeid): t.message for e in r.exercises for t in e.tests}
    first: dict[int, str] = {}
    for c in v.all_causes:
        first[c.number] = c.exercise or c.costs[0].exercise
    out: list[dict[str, Any]] = []
    for e, ex in zip(v.exercises, r.exercises, strict=True):
        causes = [{"number": c.number, "heading": cause_heading(c, v), "text": c.text, "tests": cause_tests(c, v)}
                  for c in v.all_causes if first[c.number] == e.id]
        tests = [{"name": t.name, "status": t.status, "points": t.points, "max_points": t.max_points,
                  "message": full[(e.id, tr.nodeid)] if not t.passed else "", "own": t.message, "cause": t.cause}
                 for t, tr in zip(e.tests, ex.tests, strict=True)]
        out.append({"exercise": e.id, "title": e.title, "points": e.points, "max_points": e.max_points,
                    "causes": causes, "tests": tests})
    return out + ([{"error": r.error}] if r.error else [])
