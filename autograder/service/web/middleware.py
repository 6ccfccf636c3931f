"""Two ASGI middlewares around the whole app, so that they hold for every response and every request body.

``SecurityHeaders`` sets the headers on each response that leaves the app:
pages, JSON, redirects, ``/static`` files, and the answers no route writes
(Starlette's 404s and 405s, its 400 for a form with too many fields, a 500).
Set per route, 6 of 19 kinds of response went out with no CSP and no
``nosniff``. A route may set a stricter or a looser CSP of its own (the class
report's hashed script; an LTI page framed by the LMS, whose ``frame-ancestors`` then
replaces ``X-Frame-Options``); every other header is this module's.

``BodyDeadline`` gives a request's body ``seconds`` to arrive in full: a
client that trickles an upload a byte at a time is answered 408 instead of
holding a connection, a file and a buffer for as long as it likes (the
headers' deadline is the server's: ``serving.py``).
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from autograder.errors import RequestRefused

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"no-referrer",
    b"x-frame-options": b"DENY",
    b"cross-origin-opener-policy": b"same-origin",
    b"cross-origin-resource-policy": b"same-origin",
    b"permissions-policy": b"camera=(), microphone=(), geolocation=(), payment=()",
}

# Headers a route may set for itself: an LTI page the LMS opened in a window of its own keeps its opener
# (``unsafe-none``) for the platform's postMessage storage and the registration's close message.
ROUTE_MAY_SET = frozenset({b"cross-origin-opener-policy"})

Scope = dict[str, Any]
ASGIApp = Any


class SecurityHeaders:
    def __init__(self, app: ASGIApp, csp: str = CSP) -> None:
        self.app = app
        self.csp = csp.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith("/static/")

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                given = [(k, v) for k, v in message.get("headers", []) if (k.lower() not in HEADERS or k.lower()
                         in ROUTE_MAY_SET) and (static or k.lower() != b"cache-control")]
                own = next((v for k, v in given if k.lower() == b"content-security-policy"), None)
                set_by_route = {k.lower() for k, _ in given}
                out = given + [(k, v) for k, v in HEADERS.items() if k not in set_by_route]
                if own is None:
                    out.append((b"content-security-policy", self.csp))
                elif b"frame-ancestors 'none'" not in own:  # a page the LMS may frame (service/lti/): its CSP says who
                    out = [(k, v) for k, v in out if k != b"x-frame-options"]
                if not static:
                    out.append((b"cache-control", b"no-store"))
                message = {**message, "headers": out}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyDeadline:
    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        end = time.monotonic() + self.seconds
        done = False

        async def receive_by_deadline() -> dict[str, Any]:
            nonlocal done
            if done:  # the body is in: what comes next (a disconnect) may wait as long as the response takes
                return dict(await receive())
            with anyio.move_on_after(max(0.0, end - time.monotonic())) as scope_:
                message = dict(await receive())
            if scope_.cancelled_caught:
                raise RequestRefused(408, f"the request's body did not arrive within {self.seconds:g} s: try "
                                          "again on a steadier connection (nothing was submitted)")
            if message["type"] != "http.request" or not message.get("more_body", False):
                done = True
            return message

        await self.app(scope, receive_by_deadline, send)
