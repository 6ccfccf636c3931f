"""The student's pages: the home page (assignments, rules, their attempts), the upload form, a submission's
feedback page. Staff may open any submission's page; a student only their own (``Service.own``)."""

from __future__ import annotations

import datetime as dt
import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from autograder.errors import RequestRefused as Refused
from autograder.report.feedback_page import feedback_body
from autograder.service.ledger import adjustments_of
from autograder.service.policy import when as policy_when
from autograder.service.web.site import Service, View, read_upload


def routes(svc: Service) -> list[Route]:
    """The student's routes over ``svc`` (``app.build_app`` guards and mounts them)."""

    async def home(request: Request) -> Response:
        c = svc.caller(request)
        if c is None:
            return svc.page(request, "welcome.html", title="torchgrader")
        if c.person.staff:
            return RedirectResponse("/staff", status_code=303)  # staff have no assignments to submit to
        ctx = await run_in_threadpool(svc.home_context, c)
        return svc.page(request, "home.html", title="Your assignments", **ctx)

    async def submit_form(request: Request) -> Response:
        c = svc.need(request)
        svc.count_upload(c)  # before the body is read: a refused upload counts too
        data, filename, fields = await read_upload(request, svc)
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
        history = await run_in_threadpool(svc.history, sub, c.person)
        shown = v.suites == "hidden" and v.result_id is not None  # adjustments apply to the hidden tests' result
        changes = (await run_in_threadpool(adjustments_of, svc.store, [sub.id])).get(sub.id, []) if shown else []
        jobs = await run_in_threadpool(svc.store.jobs_of, sub.id) if c.person.staff else []
        requests = await run_in_threadpool(lambda: svc.ledger.requests(submission=sub.id))
        p = svc.policy_of(sub.assignment)
        return svc.page(request, "submission.html", title=f"Submission {sub.filename}", v=v, feedback=body,
                        result=result, owner=owner, api=f"/api/submissions/{sub.id}", history=history, jobs=jobs,
                        adjustments=changes, can_adjust=c.person.staff and shown and v.status == "graded",
                        requests=requests, can_request=sub.person == c.person.id and _requestable(v) is None
                        and _request_window(p.regrade_requests_until) is None,
                        requests_until=p.regrade_requests_until)

    def _requestable(v: View) -> str | None:
        """Why no regrade may be asked of this view of a submission (None: it may)."""
        if v.suites != "hidden" or v.status != "graded" or v.result_id is None:
            return "ask once the submission's hidden tests are graded and shown to you"
        return None

    def _request_window(until: dt.datetime | None) -> str | None:
        """Why no regrade may be asked now under the assignment's ``regrade_requests_until`` (None: it may)."""
        if until is None:
            return "this assignment takes no regrade requests"
        if time.time() > until.timestamp():
            return f"regrade requests closed on {policy_when(until)}"
        return None

    async def regrade_request(request: Request) -> Response:
        """A student asks staff to look again at one exercise or one test of their graded submission."""
        c = svc.need(request)
        form = await request.form(max_files=0, max_fields=8)
        svc.check_csrf(c, str(form.get("csrf", "")))
        sub = await run_in_threadpool(svc.own, c, request.path_params["sid"])
        if sub.person != c.person.id:
            raise Refused(403, "only the student who submitted it may ask for a regrade (staff: adjust it)")
        p = svc.policy_of(sub.assignment)
        v = await run_in_threadpool(svc.view, sub, c.person)
        why = _request_window(p.regrade_requests_until) or _requestable(v)
        if why:
            raise Refused(403, f"regrade request: {why}")
        result = await run_in_threadpool(svc.result, v)
        assert result is not None
        # the target is an index into the stored result ("e2" an exercise, "e2.t5" one of its tests): never a
        # student-chosen name
        target = str(form.get("target", ""))
        exercise = test = ""
        parts = target.split(".")
        try:
            ex = result.exercises[int(parts[0].removeprefix("e"))] if parts[0].startswith("e") else None
            exercise = ex.id if ex else ""
            if ex is not None and len(parts) == 2 and parts[1].startswith("t"):
                test = ex.tests[int(parts[1][1:])].nodeid
            elif len(parts) > 1:
                exercise = ""
        except (ValueError, IndexError):
            exercise = ""
        if not exercise:
            raise Refused(400, "regrade request: choose the exercise or the test you ask about")
        comment = str(form.get("comment", "")).strip()[:1000]
        if not comment:
            raise Refused(400, "regrade request: say what you think was graded wrongly, and why")
        try:
            await run_in_threadpool(svc.ledger.request_regrade, sub.id, exercise, test, comment)
        except ValueError:
            raise Refused(409, "regrade request: you already asked about this; staff will answer it") from None
        return RedirectResponse(f"/submissions/{sub.id}#requests", status_code=303)

    return [
        Route("/", home),
        Route("/submit", submit_form, methods=["POST"]),
        Route("/submissions/{sid}", submission_page),
        Route("/submissions/{sid}/regrade-request", regrade_request, methods=["POST"]),
    ]
