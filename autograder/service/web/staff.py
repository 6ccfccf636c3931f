"""The staff's pages: the dashboard (workers, queue, students, regrades, extensions, links), a student's
history, the class report, and the gradebook exports (CSV under /api/staff/). Every route needs a staff
caller."""

from __future__ import annotations

import datetime as dt
import re
import time
import urllib.parse
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from autograder.errors import RequestRefused as Refused
from autograder.report.view import score_text
from autograder.service import exports, policy
from autograder.service.ledger import PAGE_SIZE, SORTS, STATUSES, Adjustment, Filters, adjustments_of
from autograder.service.roster import issue_links
from autograder.service.web.site import CSP, Service

QUEUE_SHOWN = 50  # jobs listed on the dashboard, in the order the workers take them; the count says the rest
DASHBOARD_ROWS = 100  # students and people listed on the dashboard (?all=1: every one; the submissions list pages)


def routes(svc: Service) -> list[Route]:
    """The staff's routes over ``svc`` (``app.build_app`` guards and mounts them)."""

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

        everyone = request.query_params.get("all") == "1"

        def ctx() -> dict[str, Any]:
            students = svc.store.people("student")
            shown = students if everyone else students[:DASHBOARD_ROWS]
            rows = exports.counting_rows(svc.cfg, svc.store, _titles(), people=shown)
            people = sorted(svc.store.people(), key=lambda p: not p.staff)  # staff first: a few, always listed
            jobs = svc.store.queue()  # the first QUEUE_SHOWN listed (a burst's 300 made every render slow)
            queue = [(j, svc.store.submission(j.submission)) if i < QUEUE_SHOWN else (j, None)
                     for i, j in enumerate(jobs)]
            counts = svc.store.submission_counts()
            blocked = {p.id: why for p in svc.cfg.assignments if (why := svc.pool.blocked(p.id))}
            return {"rows": rows, "queue": queue, "slots": svc.pool.slots, "health": svc.pool.health(),
                    "blocked": blocked, "recent": svc.store.recent_jobs(20), "now": time.time(),
                    "counts": counts, "people": people if everyone else people[:DASHBOARD_ROWS],
                    "students_total": len(students), "students_shown": len(shown), "people_total": len(people),
                    "extensions": svc.store.extensions(),
                    "assignments": svc.cfg.assignments, "titles": _titles(),
                    "needs_ta": svc.store.needs_ta(), "store_problems": svc.store.store_problems(),
                    "lms": svc.lti.summary() if svc.lti is not None else None,
                    "requests": svc.ledger.requests(state="open"), "late_bank": svc.cfg.late_days,
                    "queue_shown": QUEUE_SHOWN}
        return svc.page(request, "staff.html", title="Staff dashboard", **await run_in_threadpool(ctx),
                        new_link=None)

    async def student_page(request: Request) -> Response:
        c = svc.need(request, staff=True)
        pid = request.path_params["pid"]
        person = await run_in_threadpool(svc.store.person, pid)
        if person is None:
            raise Refused(404, "no such person")

        def ctx() -> tuple[list[Any], policy.LateDays]:
            by_aid, bank = policy.course_standings(svc.cfg, svc.store, pid)
            return [(p, [(st, svc.view(st.submission, c.person)) for st in reversed(by_aid[p.id])])
                    for p in svc.cfg.assignments], bank
        audit = await run_in_threadpool(lambda: svc.ledger.audit(person=pid))
        history, bank = await run_in_threadpool(ctx)
        return svc.page(request, "student.html", title=f"History of {person.name}", person=person,
                        history=history, late_days=bank, audit=audit, assignments=svc.cfg.assignments,
                        extensions=[e for e in await run_in_threadpool(svc.store.extensions) if e[0] == pid])

    async def class_report(request: Request) -> Response:
        svc.need(request, staff=True)
        aid = request.path_params["aid"]
        if aid not in svc.pool.assignments:
            raise Refused(404, "no such assignment")
        from autograder.report.classreport import SCRIPT_CSP, class_report_html

        def html() -> str:
            page = class_report_html(**svc.class_report(aid, _rows()))
            # inside the site: the way back to the dashboard and the list, as on every staff page
            return page.replace("<body>\n", "<body>\n<nav aria-label=\"main\"><a href=\"/staff\">Staff dashboard"
                                "</a> · <a href=\"/staff/submissions\">Submissions</a></nav>\n", 1)
        # the report is one self-contained file with its own inline <style> and its one (hashed) sorting script
        csp = CSP.replace("style-src 'self'", "style-src 'unsafe-inline'").replace(
            "script-src 'self'", f"script-src 'self' {SCRIPT_CSP}")
        return HTMLResponse(await run_in_threadpool(html), headers={"Content-Security-Policy": csp})

    async def submissions_page(request: Request) -> Response:
        svc.need(request, staff=True)
        qp = request.query_params
        f = _filters(qp, svc)

        def ctx() -> dict[str, Any]:
            flt = f
            if qp.get("similar") == "yes":
                rows = _rows()
                aids = [f.assignment] if f.assignment else list(svc.pool.assignments)
                flt = replace(f, similar=frozenset().union(*(svc.similar(a, rows) for a in aids)))
            total, found = svc.ledger.find(flt)
            pages = max(1, -(-total // PAGE_SIZE))
            return {"rows": found, "total": total, "pages": pages, "page": min(f.page, pages), "f": f,
                    "qp": qp, "assignments": svc.cfg.assignments, "statuses": STATUSES, "sorts": list(SORTS),
                    "link": lambda **kw: _link(qp, **kw)}
        return svc.page(request, "submissions.html", title="Submissions", **await run_in_threadpool(ctx))

    async def submission_file(request: Request) -> Response:
        c = svc.need(request, staff=True)
        sub = await run_in_threadpool(svc.own, c, request.path_params["sid"])
        data = await run_in_threadpool(svc.blobs.get, sub.sha256)
        # the name is ours (the student's id and the submission's), never the uploaded file's name
        name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{sub.person}-{sub.assignment}-{sub.id[:8]}")[:120]
        return Response(data, media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{name}.{sub.kind}"'})

    def adjust(f: dict[str, str], by: str) -> str:
        """Add, deduct or set one exercise's points of one submission, with the reason the student reads."""
        sub, new, before, after = adjustment(f, by)
        svc.ledger.adjust(sub.id, new.exercise, new.kind, new.points, new.reason, by, before, after)
        return f"{sub.person}'s {sub.filename}: {new.exercise} adjusted; the total was {before}, now {after}"

    def adjustment(f: dict[str, str], by: str) -> tuple[Any, Adjustment, str, str]:
        """The checked adjustment ``f`` asks for (nothing recorded): the submission, the change, and the total
        before and after it, as the audit log and the message say them."""
        sub = svc.store.submission(f.get("submission", ""))
        if sub is None:
            raise Refused(404, "no such submission")
        rows = [r for r in svc.store.result_summaries(sub.id) if r[1] == "hidden"]
        if not rows or rows[-1][2] == "internal_error":
            raise Refused(400, "adjust: this submission has no graded result yet; adjust it once it is graded")
        result = svc.store.result_dict(rows[-1][0])
        exercises = {e["id"]: e for e in result.get("exercises", [])}
        exercise, kind, reason = f.get("exercise", ""), f.get("kind", ""), f.get("reason", "").strip()[:500]
        if exercise not in exercises:
            raise Refused(400, "adjust: choose one of the submission's exercises")
        try:
            points = float(f.get("points", ""))
        except ValueError:
            points = float("nan")
        if points != points or abs(points) > 1e6 or kind not in ("add", "deduct", "set") or (kind == "set"
                                                                                          and points < 0):
            raise Refused(400, "adjust: give the points as a number (add or deduct: how many; set: the exercise's "
                               "new points, 0 or more)")
        if not reason:
            raise Refused(400, "adjust: say why (the student reads it beside the change)")
        changes = adjustments_of(svc.store, [sub.id]).get(sub.id, [])
        before = policy.total_after(rows[-1][3], result, changes)
        new = Adjustment(0, sub.id, exercise, "set" if kind == "set" else "add",
                         -points if kind == "deduct" else points, reason, by, 0.0)
        after = policy.total_after(rows[-1][3], result, [*changes, new])
        most = rows[-1][4]
        return sub, new, score_text(before, most), score_text(after, most)

    def answer(f: dict[str, str], by: str) -> str:
        """Answer one open regrade request: accepted (with an adjustment of its exercise, through ``adjust``,
        the reply as its reason) or declined; the student reads the reply on their submission's page."""
        rid = f.get("request", "")
        req = svc.ledger.request(int(rid)) if rid.isdigit() and len(rid) < 12 else None
        if req is None:
            raise Refused(404, "no such regrade request")
        if req.state != "open":
            raise Refused(409, f"this request was already answered ({req.state} by {req.answered_by})")
        decision, reply = f.get("decision", ""), f.get("reply", "").strip()[:1000]
        if decision not in ("accepted", "declined"):
            raise Refused(400, "answer: accept or decline the request")
        if not reply:
            raise Refused(400, "answer: write a reply (the student reads it)")
        said, change = "", None
        if decision == "accepted":  # checked first; recorded with the answer, in one transaction
            _, new, before, after = adjustment({"submission": req.submission, "exercise": req.exercise,
                                                "kind": f.get("kind", ""), "points": f.get("points", ""),
                                                "reason": reply}, by)
            change = (new.kind, new.points, before, after)
            said = f"; {req.exercise} adjusted, the total was {before}, now {after}"
        if not svc.ledger.answer(req.id, decision, reply, by, change):
            raise Refused(409, "this request was answered by someone else meanwhile")
        return f"{req.person}'s regrade request on {req.exercise} {decision}{said}"

    async def staff_action(request: Request) -> Response:
        c = svc.need(request, staff=True)
        form = await request.form(max_files=0, max_fields=12)
        svc.check_csrf(c, str(form.get("csrf", "")))
        action = request.path_params["action"]
        f = {k: str(v) for k, v in form.items()}
        back = f.get("back", "")
        if not re.fullmatch(r"/(staff|submissions)[A-Za-z0-9/_?=&%.+-]*", back) or "//" in back:
            back = "/staff"  # only a page of this site, never an address from elsewhere

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
                for sid in subs:
                    sub = store.submission(sid)
                    svc.ledger.record(c.person.id, "regrade", submission=sid, person=sub.person if sub else "",
                                      assignment=sub.assignment if sub else "", reason=f.get("reason", "")[:500])
                return f"{n} submission(s) queued for regrading (their earlier results are kept)"
            if action == "adjust":
                return adjust(f, c.person.id)
            if action == "answer":
                return answer(f, c.person.id)
            if action == "reviewed":
                sub = store.submission(f.get("submission", ""))
                if sub is None:
                    raise Refused(404, "no such submission")
                svc.ledger.set_reviewed(sub.id, c.person.id, f.get("value", "1") == "1")
                return (f"{sub.filename} of {sub.person} marked "
                        f"{'reviewed' if f.get('value', '1') == '1' else 'not reviewed'}")
            if action == "extension":
                p = svc.policy_of(f.get("assignment"))
                if store.person(f.get("person", "")) is None:
                    raise Refused(404, "no such person")
                try:
                    local = dt.datetime.fromisoformat(f.get("deadline", ""))
                except ValueError:
                    raise Refused(400, "extension: give the new deadline as a date and time") from None
                when = local.replace(tzinfo=ZoneInfo(p.timezone)) if local.tzinfo is None else local
                before = store.extension(f["person"], p.id)
                store.set_extension(f["person"], p.id, when.timestamp(), c.person.id)
                svc.ledger.record(c.person.id, "extension", person=f["person"], assignment=p.id,
                                  before=svc.when(before, p.id) if before else "the course deadline",
                                  after=policy.when(when), reason=f.get("reason", "")[:500])
                return f"{f['person']} has until {policy.when(when)} for {p.id}"
            if action == "revoke":
                if store.person(f.get("person", "")) is None:
                    raise Refused(404, "no such person")
                n = store.revoke(f["person"])
                svc.ledger.record(c.person.id, "revoke links", person=f.get("person", "")[:200], after=f"{n} revoked")
                return f"{n} link(s) of {f.get('person', '')} revoked; their sessions are ended"
            if action == "link":
                if store.person(f.get("person", "")) is None:
                    raise Refused(404, "no such person")
                link = issue_links(store, svc.cfg.url(), svc.cfg.link_days, only=[f["person"]])[0]
                svc.ledger.record(c.person.id, "new link", person=link.id)
                return f"new sign-in link for {link.id}: {link.url}"
            raise Refused(404, "no such action")
        message = await run_in_threadpool(act)
        return svc.page(request, "message.html", title="Done", message=message, back=back)

    return [
        Route("/api/staff/gradebook.csv", gradebook),
        Route("/api/staff/canvas.csv", canvas),
        Route("/api/staff/moodle.csv", moodle),
        Route("/staff", dashboard),
        Route("/staff/students/{pid}", student_page),
        Route("/staff/submissions", submissions_page),
        Route("/staff/submissions/{sid}/file", submission_file),
        Route("/staff/report/{aid}", class_report),
        Route("/staff/{action}", staff_action, methods=["POST"]),
    ]


def _yes_no(v: str | None) -> bool | None:
    return {"yes": True, "no": False}.get(v or "")


def _number(v: str | None) -> float | None:
    try:
        return float(v) if v else None
    except ValueError:
        return None


def _filters(qp: Any, svc: Service) -> Filters:
    """The list's filters from the query string; a value that means nothing is ignored, never an error."""
    aid = qp.get("assignment", "")
    page = qp.get("page", "1")
    return Filters(q=qp.get("q", "")[:200], assignment=aid if svc.cfg.policy(aid) else "",
                   status=qp.get("status", ""), late=_yes_no(qp.get("late")), flagged=_yes_no(qp.get("flagged")),
                   reviewed=_yes_no(qp.get("reviewed")), min_score=_number(qp.get("min")),
                   max_score=_number(qp.get("max")), sort=qp.get("sort", "created") if qp.get("sort") in SORTS
                   else "created", descending=qp.get("order", "desc") != "asc",
                   page=int(page) if page.isdigit() and 0 < int(page) < 10**6 else 1)


def _link(qp: Any, **changes: Any) -> str:
    """This list's address with ``changes`` to its query (a new sort goes back to page 1)."""
    q = {k: v for k, v in qp.items() if v}
    q.update({k: str(v) for k, v in changes.items()})
    if "sort" in changes and "page" not in changes:
        q.pop("page", None)
    return "/staff/submissions?" + urllib.parse.urlencode(q)
