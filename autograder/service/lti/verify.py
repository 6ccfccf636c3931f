"""The ``id_token`` of a launch, verified in full before anything is believed or stored.

In order: the JWT's signature against the platform's JWKS (fetched, cached,
fetched again when a ``kid`` is unknown: the platform rotated its key), then
``iss``, ``aud`` and ``azp``, ``exp`` and ``iat``, the nonce the login issued,
a registered ``deployment_id``, the message type and the LTI version. Each
failure is a ``LaunchRefused`` saying what was wrong in words a course admin
can act on; nothing is stored for a refused launch.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from autograder.errors import LaunchRefused
from autograder.printable import printable
from autograder.service.lti.config import Platform

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
MESSAGE_TYPES = ("LtiResourceLinkRequest", "LtiDeepLinkingRequest")
LEEWAY = 60.0  # seconds of clock difference allowed between the LMS and this machine
MAX_AGE = 600.0  # an id_token issued longer ago than this is refused (a launch takes seconds)
REFETCH_SECONDS = 10.0  # an unknown kid fetches the JWKS again, at most this often per URL
CACHE_SECONDS = 3600.0


def fetch_json(url: str, timeout: float) -> Any:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 - the URL is the registered platform's
        return json.loads(r.read(1 << 20))


class PlatformKeys:
    """Each platform's JWKS by URL, cached; an unknown ``kid`` fetches it again (rotation)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._sets: dict[str, tuple[float, KeySet]] = {}

    def _fetch(self, url: str) -> KeySet:
        try:
            ks = KeySet.import_key_set(fetch_json(url, self.timeout))
        except (OSError, ValueError, JoseError, KeyError, TypeError) as e:
            raise LaunchRefused(f"the LMS's public keys could not be read from {printable(url)[:200]} "
                                f"({printable(str(e))[:200]}); ask the course admin to check the platform's "
                                "jwks_url", 502) from None
        with self._lock:
            self._sets[url] = (time.monotonic(), ks)
        return ks

    def key_set(self, url: str, kid: str | None) -> KeySet:
        with self._lock:
            got = self._sets.get(url)
        now = time.monotonic()
        if got is None or now - got[0] > CACHE_SECONDS:
            return self._fetch(url)
        fetched, ks = got
        known = {k.kid for k in ks.keys}
        if kid not in known and now - fetched > REFETCH_SECONDS:
            return self._fetch(url)
        return ks


@dataclass
class Launch:
    """A verified launch: who, from where, what they asked for."""

    platform: Platform
    claims: dict[str, Any]

    def claim(self, name: str, default: Any = None) -> Any:
        return self.claims.get(CLAIM + name, default)

    @property
    def sub(self) -> str:
        return str(self.claims["sub"])

    @property
    def message_type(self) -> str:
        return str(self.claim("message_type"))

    @property
    def deployment_id(self) -> str:
        return str(self.claim("deployment_id"))

    @property
    def roles(self) -> list[str]:
        r = self.claim("roles", [])
        return [str(x) for x in r] if isinstance(r, list) else []

    @property
    def context(self) -> dict[str, Any]:
        c = self.claim("context", {})
        return c if isinstance(c, dict) else {}

    @property
    def custom(self) -> dict[str, Any]:
        c = self.claim("custom", {})
        return c if isinstance(c, dict) else {}


STAFF_ROLES = ("Instructor", "TeachingAssistant", "ContentDeveloper")


def role_of(roles: list[str]) -> str | None:
    """staff for Instructor, TeachingAssistant or ContentDeveloper in this course, student for Learner, None for
    anything else. Only context (membership) roles count, full or short, with sub-roles such as
    ``membership/Instructor#TeachingAssistant``: an institution role (a student who teaches elsewhere is an
    Instructor of the institution) says nothing about this course."""
    names = set()
    for r in roles:
        if "/" in r and "/membership" not in r:
            continue  # institution or system role
        tail = r.split("/membership", 1)[-1].lstrip("#/")
        names |= set(tail.split("#"))
    if names & set(STAFF_ROLES):
        return "staff"
    if "Learner" in names:
        return "student"
    return None


def verify_id_token(token: str, platform_of: Any, keys: PlatformKeys, nonce_of: Any, now: float | None = None
                    ) -> Launch:
    """The launch in ``token``, verified; ``platform_of(iss, aud)`` finds the registration, ``nonce_of(iss)``
    the nonce the login issued (None when it did not start here). Raises ``LaunchRefused``."""
    now = time.time() if now is None else now
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3 or len(token) > 64_000:
        raise LaunchRefused("the LMS sent no id_token (or not a JWT): start the activity again from the course page",
                            400)
    try:
        header = json.loads(_b64(parts[0]))
        body = json.loads(_b64(parts[1]))
    except (ValueError, TypeError):
        raise LaunchRefused("the id_token is not readable JSON: start the activity again from the course page",
                            400) from None
    if not isinstance(header, dict) or not isinstance(body, dict):
        raise LaunchRefused("the id_token is not a JWT", 400)
    iss, aud = body.get("iss"), body.get("aud")
    platform = platform_of(iss, aud) if isinstance(iss, str) else None
    if platform is None:
        raise LaunchRefused(f"this tool has no registration for the LMS {printable(str(iss))[:200]!r} with client id "
                            f"{printable(str(aud))[:120]}: ask the course admin to add it ([[lti.platforms]] in the "
                            "service's config, or dynamic registration)", 403)
    if header.get("alg") != "RS256":
        raise LaunchRefused(f"the id_token is signed with {printable(str(header.get('alg')))[:20]}, not RS256", 401)
    ks = keys.key_set(platform.jwks_url, header.get("kid"))
    try:
        verified = jwt.decode(token, ks, algorithms=["RS256"])
    except (JoseError, ValueError) as e:
        raise LaunchRefused(f"the id_token's signature does not match the LMS's published keys "
                            f"({printable(type(e).__name__)}): it was not signed by {printable(platform.issuer)[:200]}",
                            401) from None
    c = verified.claims
    auds: list[Any] = c["aud"] if isinstance(c.get("aud"), list) else [c.get("aud")]
    if platform.client_id not in auds:
        raise LaunchRefused(f"the id_token is meant for another tool (aud {printable(str(c.get('aud')))[:120]}, "
                            f"this tool is client {printable(platform.client_id)})", 401)
    azp = c.get("azp")
    if (len(auds) > 1 and azp is None) or (azp is not None and azp != platform.client_id):
        raise LaunchRefused("the id_token's authorized party (azp) is not this tool", 401)
    exp, iat = c.get("exp"), c.get("iat")
    if not isinstance(exp, int | float) or not isinstance(iat, int | float):
        raise LaunchRefused("the id_token has no exp or iat", 401)
    if exp < now - LEEWAY:
        raise LaunchRefused("the id_token has expired: start the activity again from the course page (if it keeps "
                            "happening, the LMS's clock or this server's is wrong)", 401)
    if iat > now + LEEWAY or iat < now - MAX_AGE:
        raise LaunchRefused("the id_token was issued at a time this server cannot accept (check both clocks) ", 401)
    nonce = c.get("nonce")
    expected = nonce_of(platform.issuer)
    if not isinstance(nonce, str) or not nonce or expected is None or nonce != expected:
        raise LaunchRefused("the id_token's nonce is not the one this login issued (a replayed or foreign launch): "
                            "start the activity again from the course page", 401)
    if not isinstance(c.get("sub"), str) or not c["sub"]:
        raise LaunchRefused("the launch names no user (sub): torchgrader needs a signed-in LMS user", 403)
    launch = Launch(platform, c)
    if launch.claim("version") != "1.3.0":
        raise LaunchRefused(f"LTI version {printable(str(launch.claim('version')))[:20]!r} is not supported (1.3.0 is)",
                            400)
    if launch.message_type not in MESSAGE_TYPES:
        raise LaunchRefused(f"the message type {printable(launch.message_type)[:60]!r} is not one torchgrader "
                            f"answers ({', '.join(MESSAGE_TYPES)})", 400)
    if launch.deployment_id not in platform.deployment_ids:
        raise LaunchRefused(f"the deployment {printable(launch.deployment_id)[:120]!r} is not registered with this "
                            f"tool: ask the course admin to add it to deployment_ids of {platform.name}", 403)
    return launch


def _b64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
