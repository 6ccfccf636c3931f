"""Telling an LMS about the tool: LTI Dynamic Registration, Canvas's JSON configuration, the deep-linking answer.

Dynamic registration (IMS LTI Dynamic Registration 1.0; Moodle 4.1 and later,
Brightspace, others): the admin pastes the tool's registration URL into the
LMS, which opens it with its ``openid_configuration`` URL and a one-time
``registration_token``; the tool reads the configuration, posts its own to
the LMS's registration endpoint and keeps the client id and deployment id it
gets back. The URL carries the service's registration key (printed at start),
so only someone given it can register a platform: a platform's staff become
staff here.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from autograder.errors import LmsError
from autograder.printable import printable
from autograder.service.lti.config import Platform
from autograder.service.lti.keys import ToolKeys
from autograder.service.lti.platform import SCOPE_LINEITEM, SCOPE_NRPS, SCOPE_SCORE
from autograder.service.lti.verify import CLAIM, DL
from autograder.service.store import new_secret

TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
SCOPES = [SCOPE_LINEITEM, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
          "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly", SCOPE_SCORE, SCOPE_NRPS]
TITLE = "torchgrader"
DESCRIPTION = "Submit PyTorch exercises and get feedback within a minute; scores go to the gradebook."


def tool_configuration(urls: dict[str, str]) -> dict[str, Any]:
    """What the tool posts to the LMS's registration endpoint (OpenID Connect client registration + LTI)."""
    host = urlsplit(urls["launch"]).netloc
    return {
        "application_type": "web", "response_types": ["id_token"], "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": urls["login"], "redirect_uris": [urls["launch"]], "client_name": TITLE,
        "jwks_uri": urls["jwks"], "token_endpoint_auth_method": "private_key_jwt", "scope": " ".join(SCOPES),
        TOOL_CONFIG: {
            "domain": host, "description": DESCRIPTION, "target_link_uri": urls["launch"],
            "claims": ["iss", "sub", "name", "given_name", "family_name", "email"],
            "messages": [{"type": "LtiDeepLinkingRequest", "target_link_uri": urls["launch"], "label": TITLE},
                         {"type": "LtiResourceLinkRequest", "target_link_uri": urls["launch"], "label": TITLE}],
        },
    }


def _json(url: str, timeout: float, body: Any = None, token: str = "") -> Any:
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None, headers=headers,
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 - the URL the admin's LMS gave
            return json.loads(r.read(1 << 20))
    except urllib.error.HTTPError as e:
        text = printable((e.read(2000) if e.fp else b"").decode("utf-8", "replace"))[:300]
        raise LmsError(f"{printable(url)[:200]} answered HTTP {e.code}: {text}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise LmsError(f"{printable(url)[:200]} could not be read ({printable(str(e))[:200]})") from None


def register(openid_configuration: str, registration_token: str, urls: dict[str, str], taken: set[str],
             timeout: float) -> Platform:
    """Run dynamic registration against the LMS; the platform to keep (raises ``LmsError`` saying why)."""
    conf = _json(openid_configuration, timeout)
    if not isinstance(conf, dict):
        raise LmsError("the LMS's openid_configuration is not a JSON object")
    need = ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "registration_endpoint"]
    missing = [k for k in need if not isinstance(conf.get(k), str)]
    if missing:
        raise LmsError(f"the LMS's openid_configuration lacks {', '.join(missing)}")
    issuer = conf["issuer"]
    if urlsplit(issuer).netloc != urlsplit(openid_configuration).netloc:
        raise LmsError(f"the configuration's issuer {printable(issuer)[:120]} is not the host it was read from")
    got = _json(conf["registration_endpoint"], timeout, tool_configuration(urls), registration_token)
    if not isinstance(got, dict) or not isinstance(got.get("client_id"), str):
        raise LmsError("the LMS's registration answer has no client_id")
    deployment = (got.get(TOOL_CONFIG) or {}).get("deployment_id") if isinstance(got.get(TOOL_CONFIG), dict) else None
    base = re.sub(r"[^a-z0-9]+", "-", urlsplit(issuer).hostname or "lms").strip("-")[:24] or "lms"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return Platform(name, issuer, got["client_id"], conf["authorization_endpoint"], conf["token_endpoint"],
                    conf["jwks_uri"], (str(deployment),) if deployment else ())


def canvas_configuration(urls: dict[str, str]) -> dict[str, Any]:
    """Canvas's developer key JSON (Admin > Developer Keys > + LTI Key > Method: Enter URL)."""
    host = urlsplit(urls["launch"]).netloc
    return {
        "title": TITLE, "description": DESCRIPTION, "oidc_initiation_url": urls["login"],
        "target_link_uri": urls["launch"], "public_jwk_url": urls["jwks"], "scopes": SCOPES,
        "custom_fields": {"canvas_user_id": "$Canvas.user.id"},
        "extensions": [{
            "domain": host, "platform": "canvas.instructure.com", "privacy_level": "public",
            "settings": {"placements": [
                {"placement": "assignment_selection", "message_type": "LtiDeepLinkingRequest",
                 "target_link_uri": urls["launch"]},
                {"placement": "link_selection", "message_type": "LtiDeepLinkingRequest",
                 "target_link_uri": urls["launch"]},
            ]},
        }],
    }


def deep_linking_response(keys: ToolKeys, platform: Platform, deployment_id: str, settings: dict[str, Any],
                          launch_url: str, assignment: str, title: str, maximum: float) -> str:
    """The signed LtiDeepLinkingResponse: one LTI resource link to ``assignment`` with its line item (label,
    maximum score, the assignment as resourceId), so the LMS makes the gradebook column."""
    now = int(time.time())
    item = {"type": "ltiResourceLink", "title": title, "url": launch_url, "custom": {"assignment": assignment},
            "lineItem": {"label": title, "scoreMaximum": maximum, "resourceId": assignment, "tag": "torchgrader"}}
    claims: dict[str, Any] = {
        "iss": platform.client_id, "aud": platform.issuer, "iat": now, "exp": now + 600, "nonce": new_secret(16),
        CLAIM + "message_type": "LtiDeepLinkingResponse", CLAIM + "version": "1.3.0",
        CLAIM + "deployment_id": deployment_id, DL + "content_items": [item],
    }
    if "data" in settings:
        claims[DL + "data"] = settings["data"]
    return keys.sign(claims)
