"""The one Starlette app: the public routes (health, sign-in and out, the stylesheet), then each audience's
routes (``student``, ``api``, ``staff``, and the LMS's: ``service/lti/routes.py``), every one behind
``site.guarded`` (the per-address limit, refusals in the caller's words, the security headers), the static files,
and a 404 page for the rest.

The audiences share one ``site.Service``: its sessions (``caller``), its view of a submission (``view``) and
its renderer (``page``); the grading pool (and the LTI score outbox) starts and stops with the app's lifespan.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from autograder.errors import RequestRefused as Refused
from autograder.report.html import CSS
from autograder.service.lti.routes import routes as lti_routes
from autograder.service.store import new_secret
from autograder.service.web import api, staff, student
from autograder.service.web.middleware import BodyDeadline, SecurityHeaders
from autograder.service.web.site import COOKIE, CSP, HERE, SERVICE_CSS, Service, guarded

SIGNIN_COOKIE = "tg_signin"  # the sign-in page's one-time value (SameSite=Strict: never sent from another site)
SIGNIN_SECONDS = 600


def public_routes(svc: Service) -> list[Route]:
    """What answers without a session: the health check, the sign-in exchange, sign-out, the stylesheet."""

    async def healthz(request: Request) -> Response:
        ok, why = svc.pool.health()
        return JSONResponse({"ready": ok, "detail": why, "queued": await run_in_threadpool(svc.store.waiting)},
                            status_code=200 if ok else 503, headers=None if ok else {"Retry-After": "10"})

    async def signin(request: Request) -> Response:
        """GET shows whose link it is and a button (nothing changes: any site can send a browser to a link);
        the button's POST, from this origin with the page's one-time value, opens the session."""
        secure = request.url.scheme == "https"
        if request.method == "GET":
            token = request.query_params.get("token", "")
            person = await run_in_threadpool(svc.store.person_for_token, token) if token else None
            if person is None:
                raise Refused(401, "this sign-in link is not valid (expired, revoked, or mistyped): ask course "
                                   "staff for a new one")
            nonce = new_secret(16)
            page = svc.page(request, "signin.html", title="Sign in", person=person, token=token, nonce=nonce)
            page.set_cookie(SIGNIN_COOKIE, nonce, max_age=SIGNIN_SECONDS, httponly=True, samesite="strict",
                            secure=secure, path="/signin")
            return page
        # A browser says where a form came from: Sec-Fetch-Site, and Origin (``null`` under our no-referrer
        # policy). The one-time value below is what no other site can send; these refuse early what says so.
        origin = request.headers.get("origin", "null")
        fetch_site = request.headers.get("sec-fetch-site", "same-origin")
        ours = (svc.cfg.url(), f"{request.url.scheme}://{request.url.netloc}", "null")
        if origin not in ours or fetch_site not in ("same-origin", "none"):
            raise Refused(403, "this sign-in came from another site: open your own sign-in link and press its "
                               "button")
        form = await request.form(max_files=0, max_fields=4)
        nonce = request.cookies.get(SIGNIN_COOKIE, "")
        if not nonce or not hmac.compare_digest(nonce, str(form.get("nonce", ""))):
            raise Refused(403, "this sign-in did not come from its sign-in page (or that page is older than "
                               f"{SIGNIN_SECONDS // 60} minutes): open your sign-in link again and press its button")
        token = str(form.get("token", ""))
        got = await run_in_threadpool(svc.store.open_session, token, svc.cfg.session_hours) if token else None
        if got is None:
            raise Refused(401, "this sign-in link is not valid (expired, revoked, or mistyped): ask course staff "
                               "for a new one")
        sid, _ = got
        old = request.cookies.get(COOKIE)
        if old:  # the session it replaces ends here, not at its expiry
            await run_in_threadpool(svc.store.close_session, old)
        who = await run_in_threadpool(svc.store.session, sid)
        staff = bool(who and who[0].staff)  # staff land on their dashboard, students on their assignments
        resp = RedirectResponse("/staff" if staff else "/", status_code=303)
        resp.set_cookie(COOKIE, sid, max_age=int(svc.cfg.session_hours * 3600), httponly=True, samesite="strict",
                        secure=secure, path="/")
        resp.delete_cookie(SIGNIN_COOKIE, path="/signin")
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
        Route("/signin", signin, methods=["GET", "POST"]),
        Route("/signout", signout, methods=["POST"]),
    ]


def build_app(svc: Service, *, grade: bool = True) -> Any:
    """The ASGI app; with ``grade``, the grading pool is started and stopped by its lifespan.

    Outermost, the security headers (on every response, whoever wrote it: a route, ``/static``, Starlette's
    404, 405 and 400, a 500), then the body's deadline; then Starlette."""

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

    return SecurityHeaders(BodyDeadline(Starlette(routes=routes, lifespan=lifespan), svc.cfg.body_seconds))

