"""The student's pages: the home page (assignments, rules, their attempts), the upload form, a submission's
feedback page. Staff may open any submission's page; a student only their own (``Service.own``)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from autograder.report.feedback_page import feedback_body
from autograder.service.ledger import adjustments_of
from autograder.service.web.site import Service, read_upload


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
        return svc.page(request, "submission.html", title=f"Submission {sub.filename}", v=v, feedback=body,
                        result=result, owner=owner, api=f"/api/submissions/{sub.id}", history=history, jobs=jobs,
                        adjustments=changes, can_adjust=c.person.staff and shown and v.status == "graded")

    return [
        Route("/", home),
        Route("/submit", submit_form, methods=["POST"]),
        Route("/submissions/{sid}", submission_page),
    ]
