"""The LTI routes: login initiation, launch, the browser binding, deep linking, registration, the staff's LMS page.

How a launch is bound to the browser that started it, with no cross-site cookie:

- **a window of its own** (the platform opened the tool in a new window or tab, or the person clicked "open in
  a new window"): the login sets a first-party ``SameSite=Lax`` binder cookie and redirects to the LMS. The
  LMS's cross-site POST to ``/lti/launch`` carries no cookie; the launch is verified, held in memory, and the
  page it answers posts itself to ``/lti/finish`` from this origin, which does carry the binder: it must
  match the one the login recorded;
- **inside the LMS's iframe, with the LMS's client-side storage** (``lti_storage_target``): the login page
  puts the state into the platform's frame by postMessage before going to the LMS; the launch page reads it
  back from there and posts it to ``/lti/finish``. A browser that did not start the login has no such state.
  A session cookie cannot live in the iframe either (third-party cookies are blocked), so the page offers a
  button that opens torchgrader in a new window with a one-time code;
- **inside an iframe without that storage**: the login page asks to open the tool in a new window (first case).

``/lti/finish`` and ``/lti/enter`` take only same-origin POSTs (``Sec-Fetch-Site: same-origin``, or an ``Origin``
that is this service's), so no other site can finish a launch in someone's browser (login CSRF).
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from autograder.errors import LaunchRefused, LmsError
from autograder.errors import RequestRefused as Refused
from autograder.printable import printable
from autograder.service.lti.registration import canvas_configuration, deep_linking_response, register
from autograder.service.lti.tables import digest
from autograder.service.lti.tool import HOLD_SECONDS, Held, LtiTool
from autograder.service.lti.verify import DL, role_of, verify_id_token
from autograder.service.store import new_secret

HERE = Path(__file__).resolve().parent
BINDER = "tg_lti_binder"
LOGIN_PARAMS = ("iss", "login_hint", "target_link_uri", "lti_message_hint", "client_id", "lti_deployment_id",
                "lti_storage_target")


def _csp(base: str, frame_ancestors: list[str] | None = None, form_action: list[str] | None = None) -> str:
    parts = []
    for d in base.split(";"):
        d = d.strip()
        if frame_ancestors is not None and d.startswith("frame-ancestors"):
            d = "frame-ancestors " + " ".join(["'self'", *frame_ancestors])
        if form_action is not None and d.startswith("form-action"):
            d = "form-action " + " ".join(["'self'", *form_action])
        parts.append(d)
    return "; ".join(parts)


def routes(svc: Any, tool: LtiTool, cookie: str, csp: str) -> list[Route]:
    """The LTI routes of ``svc`` (the web tier's ``Service``: its sessions, pages and checks); ``cookie`` is the
    session cookie's name, ``csp`` the service's Content-Security-Policy (the framed pages widen it to the LMS)."""
    loader = svc.env.loader
    svc.env.loader = jinja2.ChoiceLoader([loader, jinja2.FileSystemLoader(HERE / "templates")])

    def framed(resp: Response) -> Response:
        """A page the LMS may show in its iframe (login, launch, finish): framed by the LMSs' origins only."""
        origins = sorted({o for p in tool.platforms() for o in p.origins()})
        resp.headers["Content-Security-Policy"] = _csp(csp, frame_ancestors=origins)
        # Opened by the LMS as a window of its own, the page talks to its opener (the platform's postMessage
        # storage, dynamic registration's close message): same-origin would cut that line.
        resp.headers["Cross-Origin-Opener-Policy"] = "unsafe-none"
        return resp

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> Response:
        return framed(svc.page(request, template, status=status, **ctx))

    def refused(request: Request, e: Refused) -> Response:
        return page(request, "lti_refused.html", status=e.status, title="Launch refused", message=e.message)

    def same_origin(request: Request) -> None:
        """Only this service's own pages: ``Sec-Fetch-Site`` says so (browsers send ``Origin: null`` under the
        service's no-referrer policy); a client without it must name this origin."""
        mine = {tool.origin(), f"{request.url.scheme}://{request.url.netloc}"}
        site = request.headers.get("sec-fetch-site")
        if site != "same-origin" and (site is not None or request.headers.get("origin") not in mine):
            raise LaunchRefused("this step of the LMS launch must come from torchgrader's own page (a form from "
                                "another site cannot finish a launch): start again from the course page", 403)

    # ------------------------------------------------------------------ OIDC login initiation
    async def login(request: Request) -> Response:
        params = dict(request.query_params)
        if request.method == "POST":
            form = await request.form(max_files=0, max_fields=20)
            params |= {k: str(v) for k, v in form.items()}
        p = {k: params.get(k, "")[:2000] for k in LOGIN_PARAMS}
        try:
            platform = tool.platform(p["iss"], p["client_id"] or None)
            if platform is None:
                raise LaunchRefused(f"this tool has no registration for the LMS {printable(p['iss'])[:200]!r}"
                                    f"{' with client id ' + printable(p['client_id'])[:100] if p['client_id'] else ''}"
                                    ": ask the course admin to add it", 403)
            if p["lti_deployment_id"] and p["lti_deployment_id"] not in platform.deployment_ids:
                raise LaunchRefused(f"the deployment {printable(p['lti_deployment_id'])[:120]!r} is not registered "
                                    f"with this tool: ask the course admin to add it to {platform.name}'s "
                                    "deployment_ids", 403)
            if not p["login_hint"]:
                raise LaunchRefused("the LMS sent no login_hint: start the activity again from the course page", 400)
            target = p["target_link_uri"] or tool.urls()["launch"]
            if urlsplit(target).netloc != urlsplit(tool.cfg.url()).netloc:
                raise LaunchRefused(f"the target {printable(target)[:200]} is not on this torchgrader server "
                                    f"({tool.cfg.url()}): check the tool's URLs in the LMS", 400)
        except Refused as e:
            return refused(request, e)
        in_frame = request.headers.get("sec-fetch-dest") == "iframe"
        if in_frame and not p["lti_storage_target"]:
            again = "/lti/login?" + urlencode({k: v for k, v in p.items() if v})
            return page(request, "lti_window.html", title="Open torchgrader", again=again)
        state, nonce = new_secret(24), new_secret(24)
        query = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
                 "client_id": platform.client_id, "redirect_uri": tool.urls()["launch"], "login_hint": p["login_hint"],
                 "state": state, "nonce": nonce}
        if p["lti_message_hint"]:
            query["lti_message_hint"] = p["lti_message_hint"]
        sep = "&" if "?" in platform.auth_login_url else "?"
        auth = platform.auth_login_url + sep + urlencode(query)
        if in_frame:
            await run_in_threadpool(tool.tables.start_login, state, nonce, platform.issuer, platform.client_id, state,
                                    "storage", target, p["lti_storage_target"])
            return page(request, "lti_login.html", title="Signing in through the LMS", auth=auth, state=state,
                        target=p["lti_storage_target"], origin=platform.auth_origin)
        binder = request.cookies.get(BINDER) or new_secret(24)
        await run_in_threadpool(tool.tables.start_login, state, nonce, platform.issuer, platform.client_id, binder,
                                "cookie", target)
        resp = RedirectResponse(auth, status_code=302)
        resp.set_cookie(BINDER, binder, max_age=3600, httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", path="/lti/")
        return framed(resp)

    # ------------------------------------------------------------------ the launch
    def verify(form: dict[str, str]) -> Held:
        if form.get("error"):
            raise LaunchRefused(f"the LMS refused the launch: {printable(form['error'])[:100]} "
                                f"{printable(form.get('error_description', ''))[:300]}", 400)
        state = form.get("state", "")
        login = tool.tables.login(state) if state else None
        if login is None:
            raise LaunchRefused("this launch does not answer a login started here (its state does not match): "
                                "start the activity again from the course page", 401)
        if login.used is not None:
            raise LaunchRefused("this launch was already used (a replayed id_token and state): start the activity "
                                "again from the course page", 401)

        def platform_of(iss: str, aud: Any) -> Any:  # the registration the login was started for
            return tool.platform(login.issuer, login.client_id) if iss == login.issuer else None

        launch = verify_id_token(form.get("id_token", ""), platform_of, tool.platform_keys,
                                 lambda iss: login.nonce if iss == login.issuer else None)
        role = role_of(launch.roles)
        if role is None:
            raise LaunchRefused("your role in this LMS course gives no access to torchgrader (it admits Learners, "
                                "Instructors, Teaching Assistants and Content Developers)", 403)
        wants_staff = launch.message_type == "LtiDeepLinkingRequest" or \
            urlsplit(str(launch.claim("target_link_uri", ""))).path.startswith("/staff")
        if wants_staff and role != "staff":
            raise LaunchRefused("this page is for course staff only: the LMS says you are a Learner in this course",
                                403)
        why = tool.tables.use_login(state, launch.platform.issuer, str(launch.claims["nonce"]))
        if why:
            raise LaunchRefused("this launch was already used (its nonce was seen before): start the activity "
                                "again from the course page", 401)
        return Held(launch, login, role, time.time() + HOLD_SECONDS)

    async def launch(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=20, max_part_size=128 * 1024)
        fields = {k: str(v) for k, v in form.items()}
        try:
            held = await run_in_threadpool(verify, fields)
        except Refused as e:
            return refused(request, e)
        handle = tool.hold(held)
        return page(request, "lti_launch.html", title="Signing in", handle=handle, mode=held.login.mode,
                    state=fields.get("state", ""), origin=held.launch.platform.auth_origin, target=held.login.frame)

    # ------------------------------------------------------------------ binding to the browser, then a session
    def destination(held: Held, pid: str) -> str:
        if held.launch.message_type == "LtiDeepLinkingRequest":
            settings = held.launch.claims.get(DL + "deep_linking_settings") or {}
            h = tool.hold(Held(held.launch, held.login, held.role, time.time() + 3600,
                               {"person": pid, "settings": settings if isinstance(settings, dict) else {}}))
            return f"/lti/deeplink/{h}"
        path = urlsplit(str(held.launch.claim("target_link_uri", ""))).path
        if held.role == "staff":
            return path if path.startswith("/staff") else "/staff"
        return "/"

    def open_session(request: Request, pid: str, dest: str) -> Response:
        old = request.cookies.get(cookie)
        if old:
            svc.store.close_session(old)
        token = svc.store.issue_token(pid, svc.cfg.session_hours / 24)
        got = svc.store.open_session(token, svc.cfg.session_hours)
        assert got is not None
        resp = RedirectResponse(dest, status_code=303)
        resp.set_cookie(cookie, got[0], max_age=int(svc.cfg.session_hours * 3600), httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")
        return resp

    async def finish(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=8)
        try:
            same_origin(request)
            held = tool.take(str(form.get("handle", "")))
            if held is None:
                raise LaunchRefused("this launch has expired or was finished already: start the activity again "
                                    "from the course page", 401)
            if held.login.mode == "cookie":
                proof = request.cookies.get(BINDER, "")
                why = ("this launch was started in another browser, or the browser dropped torchgrader's cookie (the "
                       "state does not match): start the activity again from the course page; if the LMS shows "
                       "torchgrader inside its page, open it in a new window")
            else:
                proof = str(form.get("proof", ""))
                why = ("this launch was not started in this browser (the state the LMS's page keeps does not "
                       "match): start the activity again from the course page")
            if not proof or not secrets.compare_digest(digest(proof), held.login.binder):
                raise LaunchRefused(why, 401)
        except Refused as e:
            return refused(request, e)

        def admit() -> tuple[str, str]:
            pid = tool.admit(held)
            ctx = held.launch.context
            if held.role == "staff" and ctx.get("id"):
                tool.sync_later(held.launch.platform.issuer, str(ctx["id"]))
            return pid, destination(held, pid)
        pid, dest = await run_in_threadpool(admit)
        if held.login.mode == "cookie":
            return open_session(request, pid, dest)
        code = tool.hold(Held(held.launch, held.login, held.role, time.time() + HOLD_SECONDS,
                              {"person": pid, "dest": dest}))
        return page(request, "lti_enter.html", title="Open torchgrader", code=code)

    async def enter(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=4)
        try:
            same_origin(request)
            held = tool.take(str(form.get("code", "")))
            if held is None or "dest" not in held.data:
                raise LaunchRefused("this link has expired or was used already: start the activity again from the "
                                    "course page", 401)
        except Refused as e:
            return refused(request, e)
        return await run_in_threadpool(open_session, request, held.data["person"], held.data["dest"])

    # ------------------------------------------------------------------ deep linking
    def dl_held(request: Request) -> tuple[Any, Held]:
        c = svc.need(request, staff=True)
        held = tool.peek(request.path_params["h"])
        if held is None or held.data.get("person") != c.person.id:
            raise Refused(404, "this link choice has expired: open the tool again from the LMS's link picker")
        return c, held

    async def deeplink_page(request: Request) -> Response:
        c, held = dl_held(request)
        choices = [(p.id, tool.maxima(p.id)) for p in svc.cfg.assignments]
        return svc.page(request, "lti_deeplink.html", title="Choose an assignment", choices=choices,
                        course=printable(str(held.launch.context.get("title", "")))[:200])

    async def deeplink_choose(request: Request) -> Response:
        c, held = dl_held(request)
        form = await request.form(max_files=0, max_fields=4)
        svc.check_csrf(c, str(form.get("csrf", "")))
        aid = str(form.get("assignment", ""))
        if svc.cfg.policy(aid) is None:
            raise Refused(400, "choose one of the assignments listed")
        tool.take(request.path_params["h"])
        settings = held.data["settings"]
        ret = str(settings.get("deep_link_return_url", ""))
        if urlsplit(ret).scheme not in ("http", "https"):
            raise Refused(400, "the LMS gave no deep_link_return_url: open the tool again from the LMS's link picker")
        title, maximum = tool.maxima(aid)
        jwt = deep_linking_response(tool.keys, held.launch.platform, held.launch.deployment_id, settings,
                                    tool.urls()["launch"], aid, title, maximum)
        u = urlsplit(ret)
        resp = svc.page(request, "lti_deeplink_return.html", title="Back to the LMS", action=ret, jwt=jwt,
                        label=title)
        resp.headers["Content-Security-Policy"] = _csp(csp, form_action=[f"{u.scheme}://{u.netloc}"])
        return resp

    # ------------------------------------------------------------------ registration and keys
    async def jwks(request: Request) -> Response:
        return JSONResponse(tool.keys.public_jwks(), headers={"Cache-Control": "max-age=300"})

    async def canvas(request: Request) -> Response:
        return JSONResponse(canvas_configuration(tool.urls()))

    async def script(request: Request) -> Response:
        return Response((HERE / "static" / "lti.js").read_text(), media_type="text/javascript")

    async def dynamic_registration(request: Request) -> Response:
        if not secrets.compare_digest(request.path_params["key"], tool.registration_key):
            raise Refused(404, "no such page")
        conf = request.query_params.get("openid_configuration", "")
        if not conf:
            raise Refused(400, "open this address from the LMS's 'register a tool by URL' page (it adds "
                               "openid_configuration)")

        def run() -> Any:
            taken = {p.name for p in tool.platforms()}
            p = register(conf, request.query_params.get("registration_token", ""), tool.urls(), taken,
                         tool.cfg.lti.http_timeout)
            tool.tables.add_platform(p)
            return p
        try:
            p = await run_in_threadpool(run)
        except LmsError as e:
            return page(request, "lti_refused.html", status=502, title="Registration failed",
                        message=f"the LMS did not complete the registration: {e.answer}")
        return page(request, "lti_registered.html", title="Registered", platform=p)

    # ------------------------------------------------------------------ the staff's LMS page
    async def lms_page(request: Request) -> Response:
        svc.need(request, staff=True)

        def ctx() -> dict[str, Any]:
            names = {p.id: p.name for p in svc.store.people()}
            return {"contexts": tool.contexts(), "members": tool.tables.members(), "scores": tool.tables.scores(),
                    "lineitems": tool.tables.lineitems(), "names": names, "urls": tool.urls(),
                    "platforms": tool.platforms(), "kid": tool.keys.kid, "assignments": svc.cfg.assignments}
        return svc.page(request, "lti_staff.html", title="LMS (LTI)", **await run_in_threadpool(ctx))

    async def lms_action(request: Request) -> Response:
        c = svc.need(request, staff=True)
        form = await request.form(max_files=0, max_fields=8)
        svc.check_csrf(c, str(form.get("csrf", "")))
        f = {k: str(v) for k, v in form.items()}
        action = request.path_params["action"]

        def act() -> str:
            if action == "sync":
                return tool.sync_roster(f.get("issuer", ""), f.get("context", ""))
            if action == "resend":
                if svc.cfg.policy(f.get("assignment", "")) is None:
                    raise Refused(404, "no such assignment")
                n = tool.outbox.resend(f["assignment"])
                return f"{n} score(s) of {f['assignment']} queued to be sent to the LMS again"
            if action == "rotate":
                kid = tool.keys.rotate()
                return f"new signing key {kid}; the previous one stays published at the JWKS URL"
            raise Refused(404, "no such action")
        message = await run_in_threadpool(act)
        return svc.page(request, "message.html", title="Done", message=message, back="/staff/lms")

    return [
        Route("/lti/login", login, methods=["GET", "POST"]),
        Route("/lti/launch", launch, methods=["POST"]),
        Route("/lti/finish", finish, methods=["POST"]),
        Route("/lti/enter", enter, methods=["POST"]),
        Route("/lti/deeplink/{h}", deeplink_page, methods=["GET"]),
        Route("/lti/deeplink/{h}", deeplink_choose, methods=["POST"]),
        Route("/lti/jwks.json", jwks),
        Route("/lti/canvas.json", canvas),
        Route("/lti/lti.js", script),
        Route("/lti/register/{key}", dynamic_registration),
        Route("/staff/lms", lms_page),
        Route("/staff/lms/{action}", lms_action, methods=["POST"]),
    ]
