"""A small LMS for the LTI tests, on its own loopback origin (127.0.0.2), built on ``lti1p3platform``.

The platform side of LTI 1.3 (OIDC login, launch messages, deep linking, access
tokens, AGS, NRPS) is lti1p3platform's; this module is only its glue: a
Starlette app serving a course page with links, the package's endpoints, and
in-memory stores for line items, scores and the roster. Knobs let a test make
it misbehave: sign with another key, an expired token, another audience, an
unknown deployment, a Learner asking for staff pages, and AGS answering 500 or
hanging.
"""

from __future__ import annotations

import html
import json
import socket
import threading
import time
import typing as t
from dataclasses import dataclass, field
from urllib.parse import urlencode

import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LineItemNotFoundException
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request as LtiRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

HOST = "127.0.0.2"
CLIENT_ID = "torchgrader-client"
DEPLOYMENT = "deployment-1"
CONTEXT = "course-101"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


def _pem() -> tuple[str, str]:
    k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    priv = k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption()).decode()
    pub = k.public_key().public_bytes(serialization.Encoding.PEM,
                                      serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return priv, pub


def free_port(host: str = HOST) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass
class User:
    sub: str
    name: str
    email: str
    roles: list[str]


@dataclass
class Lms:
    tool: str  # the tool's base URL
    port: int = field(default_factory=free_port)
    users: dict[str, User] = field(default_factory=dict)
    roster: list[str] = field(default_factory=list)  # subs NRPS lists
    lineitems: dict[str, dict[str, t.Any]] = field(default_factory=dict)
    scores: list[dict[str, t.Any]] = field(default_factory=list)  # every score POST accepted, in order
    launches: list[dict[str, str]] = field(default_factory=list)  # every launch form (id_token, state) sent
    tamper: dict[str, t.Any] = field(default_factory=dict)  # aud, deployment, expired, foreign_key, target
    ags: str = "ok"  # ok | fail (500) | hang
    links: dict[str, dict[str, t.Any]] = field(default_factory=dict)  # resource links made by deep linking
    registrations: list[dict[str, t.Any]] = field(default_factory=list)  # tools registered dynamically

    def __post_init__(self) -> None:
        self.url = f"http://{HOST}:{self.port}"
        self.private, self.public = _pem()
        self.attacker_private, _ = _pem()
        self.hang = threading.Event()

    # ------------------------------------------------------------------ the package's objects
    def registration(self) -> Registration:
        return (Registration().set_iss(self.url).set_client_id(CLIENT_ID).set_deployment_id(DEPLOYMENT)
                .set_launch_url(f"{self.tool}/lti/launch").set_deeplink_launch_url(f"{self.tool}/lti/launch")
                .set_oidc_login_url(f"{self.tool}/lti/login").set_tool_key_set_url(f"{self.tool}/lti/jwks.json")
                .set_platform_public_key(self.public).set_platform_private_key(self.private))

    def platform(self) -> LTI1P3PlatformConfAbstract:
        lms = self

        class Conf(LTI1P3PlatformConfAbstract):
            def init_platform_config(self, **kwargs: t.Any) -> None:
                self._registration = lms.registration()

            def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
                return lms.registration()
        return Conf()

    def config_toml(self) -> str:
        """The tool's ``[lti]`` section for this LMS (what docs/service.md has an admin copy from an LMS)."""
        return (f'[lti]\nhttp_timeout = 2\nretry_max_seconds = 2\n[[lti.platforms]]\nname = "lms"\n'
                f'issuer = "{self.url}"\nclient_id = "{CLIENT_ID}"\nauth_login_url = "{self.url}/auth"\n'
                f'auth_token_url = "{self.url}/token"\njwks_url = "{self.url}/jwks"\n'
                f'deployment_ids = ["{DEPLOYMENT}"]\n')

    # ------------------------------------------------------------------ the app
    def app(self) -> Starlette:  # noqa: C901 - one closure per endpoint, glue only
        lms = self

        async def req(request: Request) -> LtiRequest:
            body = await request.body()
            form = dict(await request.form()) if request.headers.get("content-type", "").startswith(
                ("application/x-www-form", "multipart/")) else {}
            js = json.loads(body) if body and "json" in request.headers.get("content-type", "") else None
            data = {"method": request.method, "form_data": {k: str(v) for k, v in form.items()},
                    "get_data": dict(request.query_params), "headers": request.headers,
                    "content_type": request.headers.get("content-type"), "path": request.url.path, "json": js}

            class R(LtiRequest):
                def build_metadata(self, request: t.Any) -> t.Any:
                    return data
            return R(None)

        def answer(r: t.Any) -> Response:
            return Response(json.dumps(r.result) if r.result is not None else r.message, status_code=r.code,
                            media_type=r.media_type)

        async def course(request: Request) -> Response:
            """The course page: the assignment's link, shown the way the LMS is told (``mode``)."""
            q = request.query_params
            start = "/start?" + urlencode({k: v for k, v in q.items() if k != "mode"})
            mode = q.get("mode", "window")
            if mode == "iframe":
                body = (f'<iframe name="tool" id="tool" src="{html.escape(start)}&storage=1" width="900" '
                        'height="600"></iframe>')
            elif mode == "iframe-nostorage":
                body = f'<iframe name="tool" id="tool" src="{html.escape(start)}" width="900" height="600"></iframe>'
            else:
                body = f'<a id="assignment-link" href="{html.escape(start)}" target="_blank">PyTorch fundamentals</a>'
            # the platform's client-side storage: answers lti.put_data / lti.get_data from the tool's frames
            script = """<script>
            var store = {};
            window.addEventListener("message", function (e) {
              var d = e.data || {};
              if (d.subject === "lti.put_data") { store[e.origin + d.key] = d.value;
                e.source.postMessage({subject: "lti.put_data.response", message_id: d.message_id, key: d.key,
                                      value: d.value}, e.origin); }
              if (d.subject === "lti.get_data") {
                e.source.postMessage({subject: "lti.get_data.response", message_id: d.message_id, key: d.key,
                                      value: store[e.origin + d.key]}, e.origin); }
            });
            </script>"""
            return HTMLResponse(f"<!DOCTYPE html><html><head><title>LMS course</title>{script}</head><body>"
                                f"<h1>Course 101</h1>{body}</body></html>")

        async def start(request: Request) -> Response:
            """The LMS's side of a click: OIDC third-party login initiation towards the tool."""
            q = request.query_params
            platform = lms.platform()

            class Login(OIDCLoginAbstract):
                def set_lti_message_hint(self, **kwargs: t.Any) -> None:
                    self._lti_message_hint = json.dumps(kwargs)

                def get_redirect(self, url: str) -> Response:
                    return RedirectResponse(url + ("&lti_storage_target=_parent" if q.get("storage") else ""), 302)
            login = Login(await req(request), platform)
            login.set_lti_message_hint(kind=q.get("kind", "resource"), link=q.get("link", "link-1"),
                                       user=q.get("user", ""))
            return login.initiate_login(lms.users[q.get("user", "")].sub)

        async def auth(request: Request) -> Response:
            """The OIDC authorization endpoint: builds and signs the launch, posts it to the tool."""
            platform = lms.platform()
            r = await req(request)
            hint = json.loads(r.get_data.get("lti_message_hint", "{}"))
            user = next(u for u in lms.users.values() if u.sub == r.get_data.get("login_hint"))

            class Launch(LTIAdvantageMessageLaunchAbstract):
                def prepare_launch(self, preflight_response: dict[str, t.Any]) -> None:
                    self.set_user_data(user.sub, user.roles, user.name, user.email)
                    self.set_launch_context_claim(CONTEXT, context_title="Course 101")
                    self.set_nrps(f"{lms.url}/memberships")
                    link = hint.get("link", "link-1")
                    made = lms.links.get(link, {})
                    self.set_ags(f"{lms.url}/lineitems", made.get("lineitem"))
                    if hint.get("kind") == "deeplink":
                        self.set_dl(f"{lms.url}/deeplink/return", title="Add torchgrader", extra_data={"n": 1})
                    else:
                        self.set_resource_link_claim(link, title="PyTorch fundamentals")
                        if made.get("custom"):
                            self.set_custom_parameters_claim(made["custom"])

                def get_launch_message(self, include_extra_claims: bool = True) -> dict[str, t.Any]:
                    m = super().get_launch_message(include_extra_claims)
                    if "aud" in lms.tamper:
                        m["aud"] = m["azp"] = lms.tamper["aud"]
                    if "deployment" in lms.tamper:
                        m["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] = lms.tamper["deployment"]
                    if "target" in lms.tamper:
                        m["https://purl.imsglobal.org/spec/lti/claim/target_link_uri"] = lms.tamper["target"]
                    return m

                def render_launch_form(self, launch_data: dict[str, t.Any], **kwargs: t.Any) -> Response:
                    lms.launches.append({"id_token": launch_data["id_token"], "state": launch_data["state"]})
                    return HTMLResponse(
                        f'<!DOCTYPE html><html><body><form id="f" method="post" action="{launch_data["launch_url"]}">'
                        f'<input type="hidden" name="id_token" value="{launch_data["id_token"]}">'
                        f'<input type="hidden" name="state" value="{html.escape(launch_data["state"])}">'
                        '</form><script>document.getElementById("f").submit()</script></body></html>')
            launch = Launch(r, platform)
            if lms.tamper.get("expired"):
                launch.set_id_token_expiration(-600)
            if lms.tamper.get("foreign_key"):  # same kid, another private key: a forged token
                reg = platform.get_registration()
                kid = reg.get_kid()
                reg.set_platform_private_key(lms.attacker_private)
                reg.get_kid = lambda: kid  # type: ignore[method-assign]
            return launch.lti_launch()

        async def token(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            try:
                return JSONResponse(lms.platform().get_access_token(form))
            except Exception as e:  # noqa: BLE001 - the LMS's answer to a bad assertion
                return JSONResponse({"error": "invalid_client", "error_description": str(e)}, status_code=400)

        async def jwks(request: Request) -> Response:
            return JSONResponse(lms.platform().get_jwks())

        class Ags(AssignmentsGradesService):
            def find_lineitems(self, page: int = 1, limit: t.Any = None, line_item_id: t.Any = None,
                               resource_link_id: t.Any = None, resource_id: t.Any = None, tag: t.Any = None,
                               **kw: t.Any) -> t.Any:
                items = [i for i in lms.lineitems.values() if resource_id is None or i.get("resourceId") == resource_id]
                return {"content": items, "has_next": False}

            def find_lineitem(self, line_item_id: str) -> t.Any:
                if line_item_id not in lms.lineitems:
                    raise LineItemNotFoundException()
                return lms.lineitems[line_item_id]

            def create_lineitem(self, creation_data: t.Any) -> t.Any:
                return lms.add_lineitem(dict(creation_data))

            def update_lineitem(self, update_data: t.Any) -> t.Any:
                return update_data

            def delete_lineitem(self, line_item_id: str) -> None:
                pass

            def update_score(self, line_item_id: str, score: t.Any) -> UpdateScoreStatus:
                lid = f"{lms.url}/lineitems/{line_item_id}"
                if lid not in lms.lineitems:
                    raise LineItemNotFoundException()
                lms.scores.append({"lineitem": lid, **score})
                return UpdateScoreStatus.SUCCESS

            def get_results(self, line_item_id: str, page: int = 1, limit: t.Any = None, user_id: t.Any = None
                            ) -> t.Any:
                return {"content": [], "has_next": False}

        async def lineitems(request: Request) -> Response:
            svc = Ags(await req(request), lms.platform(), f"{lms.url}/lineitems")
            if request.method == "POST":
                return answer(svc.handle_resp(svc.handle_create_lineitem))
            return answer(svc.handle_resp(svc.handle_get_lineitems))

        async def scores(request: Request) -> Response:
            if lms.ags == "fail":
                return Response("the gradebook is down", status_code=500)
            if lms.ags == "hang":
                lms.hang.wait(30)
                return Response("gateway timeout", status_code=504)
            lid = request.path_params["lid"]
            svc = Ags(await req(request), lms.platform(), f"{lms.url}/lineitems", f"{lms.url}/lineitems/{lid}")
            return answer(svc.handle_resp(svc.handle_update_score, line_item_id=lid))

        class Nrps(NamesRoleProvisioningService):
            def get_member_data_page(self, page: int = 1, limit: t.Any = None, role: t.Any = None,
                                     since: t.Any = None, **kw: t.Any) -> t.Any:
                members = [{"user_id": u.sub, "roles": u.roles, "name": u.name, "email": u.email, "status": "Active"}
                           for u in lms.users.values() if u.sub in lms.roster]
                return {"content": members, "has_next": False}

            def get_context_by_id(self) -> Context:
                return Context(id=CONTEXT, label="C101", title="Course 101")

        async def memberships(request: Request) -> Response:
            svc = Nrps(await req(request), lms.platform(), f"{lms.url}/memberships")
            return answer(svc.handle_resp(svc.handle_get_members))

        async def deeplink_return(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            items = lms.platform().validate_deeplinking_resp(form)
            for n, item in enumerate(items):
                link = f"dl-link-{len(lms.links) + n + 1}"
                made = {"title": item.get("title"), "custom": item.get("custom") or {}}
                if item.get("lineItem"):
                    made["lineitem"] = lms.add_lineitem({**item["lineItem"], "resourceLinkId": link})["id"]
                lms.links[link] = made
            return HTMLResponse(f"<!DOCTYPE html><html><head><title>Link added</title></head><body>"
                                f"<p id='added'>{len(items)} link(s) added</p></body></html>")

        async def openid_configuration(request: Request) -> Response:
            """LTI Dynamic Registration: what the LMS says of itself (the tool reads it first)."""
            return JSONResponse({"issuer": lms.url, "authorization_endpoint": f"{lms.url}/auth",
                                 "token_endpoint": f"{lms.url}/token", "jwks_uri": f"{lms.url}/jwks",
                                 "registration_endpoint": f"{lms.url}/register"})

        async def register(request: Request) -> Response:
            if request.headers.get("authorization") != "Bearer reg-token":
                return JSONResponse({"error": "invalid_token"}, status_code=401)
            body = await request.json()
            lms.registrations.append(body)
            tool_conf = "https://purl.imsglobal.org/spec/lti-tool-configuration"
            return JSONResponse({**body, "client_id": "dynamic-client",
                                 tool_conf: {**body[tool_conf], "deployment_id": "dynamic-deployment"}})

        return Starlette(routes=[
            Route("/.well-known/openid-configuration", openid_configuration),
            Route("/register", register, methods=["POST"]),
            Route("/course", course), Route("/start", start), Route("/auth", auth, methods=["GET", "POST"]),
            Route("/token", token, methods=["POST"]), Route("/jwks", jwks),
            Route("/lineitems", lineitems, methods=["GET", "POST"]),
            Route("/lineitems/{lid}/scores", scores, methods=["POST"]),
            Route("/memberships", memberships), Route("/deeplink/return", deeplink_return, methods=["POST"]),
        ])

    def add_lineitem(self, data: dict[str, t.Any]) -> dict[str, t.Any]:
        lid = f"{self.url}/lineitems/{len(self.lineitems) + 1}"
        item = {**data, "id": lid}
        self.lineitems[lid] = item
        return item

    # ------------------------------------------------------------------ running it
    def start(self) -> None:
        self.server = uvicorn.Server(uvicorn.Config(self.app(), host=HOST, port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        self.hang.set()
        self.server.should_exit = True
        self.thread.join(10)
