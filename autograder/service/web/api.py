"""The JSON API (``Authorization: Bearer TOKEN``, or the page's session with ``X-CSRF-Token``): submit, list,
one submission's status and feedback, and its live status as server-sent events. ``torchgrader submit`` and
``submit()`` in Jupyter are its clients."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from autograder.report.view import cause_heading, cause_tests, view
from autograder.results import SubmissionResult
from autograder.service.web.site import SSE_SECONDS, Service, read_upload


def routes(svc: Service) -> list[Route]:
    """The API's routes over ``svc`` (``app.build_app`` guards and mounts them)."""

    async def api_submit(request: Request) -> Response:
        c = svc.need(request)
        svc.count_upload(c)  # before the body is read: a refused upload counts too
        data, filename, fields = await read_upload(request, svc)
        svc.check_csrf(c, request.headers.get("x-csrf-token"))
        sub = await run_in_threadpool(svc.accept, c, data, filename, fields.get("assignment"))
        return JSONResponse({"id": sub.id, "status": "queued", "url": svc.url(sub)}, status_code=202)

    async def api_submission(request: Request) -> Response:
        c = svc.need(request)
        # one hand-over to a thread per poll, not two: polls are most of a burst's requests
        sub, v = await run_in_threadpool(lambda: (sub := svc.own(c, request.path_params["sid"]),
                                                  svc.view(sub, c.person)))
        out = v.api(svc.url(sub))
        if request.query_params.get("feedback") and v.result_id is not None:
            result = await run_in_threadpool(svc.result, v)
            assert result is not None
            out["feedback"] = summary(result)
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
                await asyncio.sleep(max(0.5, v.poll_s / 2))  # twice the pace a polling client is asked for
        return StreamingResponse(events(), media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})

    return [
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/submissions", api_list, methods=["GET"]),
        Route("/api/submissions/{sid}", api_submission),
        Route("/api/submissions/{sid}/events", api_events),
    ]


def summary(r: SubmissionResult) -> list[dict[str, Any]]:
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
