"""The tool's calls to a platform's services: OAuth 2 tokens, NRPS rosters, AGS line items and scores.

A service token is got with the client-credentials grant and a JWT assertion
signed by the tool's key (IMS Security Framework 4.1), cached until shortly
before it expires. Every call has a timeout (``[lti] http_timeout``), and a
failure is a ``LmsError`` carrying the LMS's answer in words for the
dashboard: it never reaches a student.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from autograder.errors import LmsError
from autograder.printable import printable
from autograder.service.lti.config import Platform
from autograder.service.lti.keys import ToolKeys
from autograder.service.store import new_secret

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
LINEITEM = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEMS = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE = "application/vnd.ims.lis.v1.score+json"
MEMBERS = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"


@dataclass
class Answer:
    status: int
    body: Any
    text: str
    headers: dict[str, str]


class PlatformClient:
    """One per service: tokens cached per (platform, scopes)."""

    def __init__(self, keys: ToolKeys, timeout: float) -> None:
        self.keys, self.timeout = keys, timeout
        self._tokens: dict[tuple[str, str, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    def _http(self, method: str, url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None
              ) -> Answer:
        req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:  # noqa: S310 - the platform's own URL
                raw = r.read(4 << 20)
                status, hdrs = r.status, dict(r.headers.items())
        except urllib.error.HTTPError as e:
            raw = e.read(4000) if e.fp else b""
            text = printable(raw.decode("utf-8", "replace"))[:300]
            raise LmsError(f"HTTP {e.code} {printable(str(e.reason))[:60]}" + (f": {text}" if text else "")) \
                from None
        except (urllib.error.URLError, OSError) as e:
            why = e.reason if isinstance(e, urllib.error.URLError) else e
            raise LmsError(f"no answer from {printable(urllib.parse.urlsplit(url).netloc)} "
                                f"({printable(str(why))[:200]})") from None
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = None
        return Answer(status, body, text, hdrs)

    def token(self, p: Platform, scopes: list[str]) -> str:
        key = (p.issuer, p.client_id, " ".join(sorted(scopes)))
        with self._lock:
            got = self._tokens.get(key)
        if got and got[0] > time.time() + 30:
            return got[1]
        now = int(time.time())
        assertion = self.keys.sign({"iss": p.client_id, "sub": p.client_id, "aud": p.auth_token_url, "iat": now,
                                    "exp": now + 300, "jti": new_secret(16)})
        form = urllib.parse.urlencode({
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion, "scope": " ".join(scopes)}).encode()
        a = self._http("POST", p.auth_token_url, data=form,
                       headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"})
        if not isinstance(a.body, dict) or not isinstance(a.body.get("access_token"), str):
            raise LmsError(f"the LMS's token endpoint gave no access_token ({printable(a.text)[:200]})")
        expires = float(a.body.get("expires_in") or 3600)
        with self._lock:
            self._tokens[key] = (time.time() + expires, a.body["access_token"])
        return str(a.body["access_token"])

    def call(self, p: Platform, scopes: list[str], method: str, url: str, *, body: Any = None,
             content_type: str = "", accept: str = "application/json") -> Answer:
        headers = {"Authorization": f"Bearer {self.token(p, scopes)}", "Accept": accept}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type or "application/json"
        return self._http(method, url, data=data, headers=headers)

    # ------------------------------------------------------------------ NRPS
    def members(self, p: Platform, memberships_url: str) -> list[dict[str, Any]]:
        """Every member of the context, following ``Link: rel=next`` pages."""
        out: list[dict[str, Any]] = []
        url: str | None = memberships_url
        pages = 0
        while url and pages < 200:
            a = self.call(p, [SCOPE_NRPS], "GET", url, accept=MEMBERS)
            if not isinstance(a.body, dict) or not isinstance(a.body.get("members"), list):
                raise LmsError(f"the LMS's roster answer has no members ({printable(a.text)[:200]})")
            out += [m for m in a.body["members"] if isinstance(m, dict)]
            url = _next_link(a.headers.get("Link", "") or a.headers.get("link", ""))
            pages += 1
        return out

    # ------------------------------------------------------------------ AGS
    def find_or_create_lineitem(self, p: Platform, lineitems_url: str, assignment: str, label: str,
                                maximum: float) -> str:
        """The line item tagged with ``assignment`` (resourceId) in this context, created when there is none."""
        sep = "&" if "?" in lineitems_url else "?"
        a = self.call(p, [SCOPE_LINEITEM], "GET",
                      f"{lineitems_url}{sep}{urllib.parse.urlencode({'resource_id': assignment})}", accept=LINEITEMS)
        items = a.body if isinstance(a.body, list) else (a.body or {}).get("content", []) \
            if isinstance(a.body, dict) else []
        for it in items:
            if isinstance(it, dict) and it.get("resourceId") == assignment and isinstance(it.get("id"), str):
                return str(it["id"])
        a = self.call(p, [SCOPE_LINEITEM], "POST", lineitems_url, content_type=LINEITEM, accept=LINEITEM,
                      body={"label": label, "scoreMaximum": maximum, "resourceId": assignment, "tag": "torchgrader"})
        if not isinstance(a.body, dict) or not isinstance(a.body.get("id"), str):
            raise LmsError(f"the LMS created the line item but named no id ({printable(a.text)[:200]})")
        return str(a.body["id"])

    def post_score(self, p: Platform, lineitem_url: str, score: dict[str, Any]) -> str:
        """POST a score to the line item's ``/scores``; returns the LMS's answer in words."""
        u = urllib.parse.urlsplit(lineitem_url)
        url = urllib.parse.urlunsplit(u._replace(path=u.path.rstrip("/") + "/scores"))
        a = self.call(p, [SCOPE_SCORE], "POST", url, body=score, content_type=SCORE)
        return f"HTTP {a.status}" + (f": {printable(a.text)[:200]}" if a.text.strip() else "")


def _next_link(link: str) -> str | None:
    for part in link.split(","):
        bits = part.split(";")
        if len(bits) > 1 and any(b.strip().replace('"', "") == "rel=next" for b in bits[1:]):
            return bits[0].strip().strip("<>")
    return None
