"""The staff's pages: the dashboard (workers, queue, students, regrades, extensions, links), a student's
history, the class report, and the gradebook exports (CSV under /api/staff/). Every route needs a staff
caller."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any
from zoneinfo import ZoneInfo

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from autograder.errors import RequestRefused as Refused
from autograder.service import exports, policy
from autograder.service.roster import issue_links
from autograder.service.web.site import CSP, Service


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

        def ctx() -> dict[str, Any]:
            rows = _rows()
            queue = [(j, svc.store.submission(j.submission)) for j in svc.store.queue()]
            counts = {p.id: len(svc.store.submissions(p.id)) for p in svc.store.people("student")}
            blocked = {p.id: why for p in svc.cfg.assignments if (why := svc.pool.blocked(p.id))}
            return {"rows": rows, "queue": queue, "slots": svc.pool.slots, "health": svc.pool.health(),
                    "blocked": blocked, "recent": svc.store.recent_jobs(20), "now": time.time(),
                    "counts": counts, "people": svc.store.people(), "extensions": svc.store.extensions(),
                    "assignments": svc.cfg.assignments, "titles": _titles(),
                    "needs_ta": svc.store.needs_ta(), "lms": svc.lti.summary() if svc.lti is not None else None}
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

    return [
        Route("/api/staff/gradebook.csv", gradebook),
        Route("/api/staff/canvas.csv", canvas),
        Route("/api/staff/moodle.csv", moodle),
        Route("/staff", dashboard),
        Route("/staff/students/{pid}", student_page),
        Route("/staff/report/{aid}", class_report),
        Route("/staff/{action}", staff_action, methods=["POST"]),
    ]
