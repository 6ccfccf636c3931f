"""The security-header middleware on a tiny app: every response gets the headers, and a route may set only its
own opener policy (an LTI page the LMS opened in a window of its own must keep ``window.opener``)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="needs starlette (pip install -e '.[serve]')")

from starlette.applications import Starlette  # noqa: E402
from starlette.responses import PlainTextResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from autograder.service.web.middleware import SecurityHeaders  # noqa: E402


def _app() -> SecurityHeaders:
    def plain(request):
        return PlainTextResponse("x")

    def opener(request):
        return PlainTextResponse("x", headers={"Cross-Origin-Opener-Policy": "unsafe-none",
                                               "X-Content-Type-Options": "sniff-please"})

    return SecurityHeaders(Starlette(routes=[Route("/plain", plain), Route("/opener", opener)]))


def test_a_route_keeps_its_own_opener_policy_and_nothing_else_of_the_middlewares():
    with TestClient(_app()) as c:
        plain, opener, missing = c.get("/plain"), c.get("/opener"), c.get("/nowhere")
    assert plain.headers["cross-origin-opener-policy"] == "same-origin"
    assert missing.headers["cross-origin-opener-policy"] == "same-origin" and missing.status_code == 404
    assert opener.headers["cross-origin-opener-policy"] == "unsafe-none"
    assert opener.headers.get_list("cross-origin-opener-policy") == ["unsafe-none"]  # said once
    assert opener.headers.get_list("x-content-type-options") == ["nosniff"]  # a route cannot loosen the rest
