"""The one Starlette app: the public routes (health, sign-in and out, the stylesheet), then each audience's
routes (``student``, ``api``, ``staff``, and the LMS's: ``service/lti/routes.py``), every one behind
``site.guarded`` (the per-address limit, refusals in the caller's words, the security headers), the static files,
and a 404 page for the rest.

The audiences share one ``site.Service``: its sessions (``caller``), its view of a submission (``view``) and
its renderer (``page``); the grading pool (and the LTI score outbox) starts and stops with the app's lifespan.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from autograder.errors import RequestRefused as Refused
from autograder.report.html import CSS
from autograder.service.lti.routes import routes as lti_routes
from autograder.service.web import api, staff, student
from autograder.service.web.site import COOKIE, CSP, HERE, SERVICE_CSS, Service, guarded


def public_routes(svc: Service) -> list[Route]:
    """What answers without a session: the health check, the sign-in exchange, sign-out, the stylesheet."""

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
        who = await run_in_threadpool(svc.store.session, sid)
        staff = bool(who and who[0].staff)  # staff land on their dashboard, students on their assignments
        resp = svc.page(request, "signin.html", title="Signing in", next="/staff" if staff else "/",
                        where="the staff dashboard" if staff else "your assignments")
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

    async def stylesheet(request: Request) -> Response:
        return Response(CSS + SERVICE_CSS, media_type="text/css")

    return [
        Route("/healthz", healthz),
        Route("/style.css", stylesheet),
        Route("/signin", signin),
        Route("/signout", signout, methods=["POST"]),
    ]


def build_app(svc: Service, *, grade: bool = True) -> Starlette:
    """The ASGI app; with ``grade``, the grading pool is started and stopped by its lifespan."""

    async def not_found(request: Request) -> Response:
        raise Refused(404, "no such page")

    lti = svc.lti  # the LMS's launches, deep linking, registration and the staff's LMS page (service/lti/)
    audiences = [public_routes, student.routes, api.routes, staff.routes]
    if lti is not None:
        audiences.append(lambda svc: lti_routes(svc, lti, COOKIE, CSP))
    routes: list[BaseRoute] = [
        Route(r.path, guarded(svc, r.endpoint), methods=r.methods)
        for module in audiences
        for r in module(svc)
    ]
    routes += [
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        Route("/{rest:path}", guarded(svc, not_found)),
    ]

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

