"""Which LMS platforms the tool trusts, and the LTI settings: the ``[lti]`` section of the service's TOML.

.. code-block:: toml

    [lti]
    http_timeout = 10          # seconds for one call to a platform (token, NRPS, AGS, JWKS)
    retry_max_seconds = 300    # the outbox's backoff grows 1, 2, 4, ... s up to this
    registration_key = ""      # "": made at first start (the dynamic registration URL carries it)

    [[lti.platforms]]
    name = "canvas"            # a short name: people's ids start with it (canvas-SUB)
    issuer = "https://canvas.instructure.com"
    client_id = "10000000000001"
    auth_login_url = "https://sso.canvaslms.com/api/lti/authorize_redirect"
    auth_token_url = "https://sso.canvaslms.com/login/oauth2/token"
    jwks_url = "https://sso.canvaslms.com/api/lti/security/jwks"
    deployment_ids = ["1:abc"]
    frame_origins = ["https://school.instructure.com"]  # optional: where the LMS's pages are (they frame ours)

A platform registered by LTI Dynamic Registration is kept in the store instead
(``tables.LtiTables.platforms``); both are looked up by issuer and client id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from autograder.errors import ConfigError

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,31}$")


@dataclass(frozen=True)
class Platform:
    """One LMS registration: the platform's endpoints and the deployments it may launch from."""

    name: str
    issuer: str
    client_id: str
    auth_login_url: str
    auth_token_url: str
    jwks_url: str
    deployment_ids: tuple[str, ...] = ()
    frame_origins: tuple[str, ...] = ()  # where the LMS's pages are, when neither the issuer's nor the login's host

    @property
    def auth_origin(self) -> str:
        """The origin of the LMS's OIDC endpoint: its client-side storage frame answers from there."""
        s = urlsplit(self.auth_login_url)
        return f"{s.scheme}://{s.netloc}"

    def origins(self) -> list[str]:
        """The LMS's web origins: those that may frame the launch pages."""
        out = []
        for u in (self.issuer, self.auth_login_url, *self.frame_origins):
            s = urlsplit(u)
            if s.scheme in ("http", "https") and s.netloc:
                o = f"{s.scheme}://{s.netloc}"
                if o not in out:
                    out.append(o)
        return out


@dataclass
class LtiConfig:
    platforms: list[Platform] = field(default_factory=list)
    http_timeout: float = 10.0
    retry_max_seconds: float = 300.0
    registration_key: str = ""


_KEYS = ("platforms", "http_timeout", "retry_max_seconds", "registration_key")
_PLATFORM_KEYS = ("name", "issuer", "client_id", "auth_login_url", "auth_token_url", "jwks_url", "deployment_ids",
                  "frame_origins")
_OPTIONAL = ("frame_origins",)


def _url(v: Any, what: str, where: str) -> str:
    s = urlsplit(str(v))
    if s.scheme not in ("http", "https") or not s.netloc:
        raise ConfigError(f"{where}: [[lti.platforms]] {what} must be an http(s) URL, not {v!r}")
    return str(v)


def parse_lti(raw: Any, where: str) -> LtiConfig:
    """The ``[lti]`` table, checked: an unknown key or a platform missing a key is an error that names it."""
    cfg = LtiConfig()
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [lti] must be a table")
    bad = set(raw) - set(_KEYS)
    if bad:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(bad))} in [lti] (known: {', '.join(_KEYS)})")
    for k in ("http_timeout", "retry_max_seconds"):
        if k in raw:
            if not isinstance(raw[k], int | float) or isinstance(raw[k], bool) or raw[k] <= 0:
                raise ConfigError(f"{where}: [lti] {k} must be a positive number of seconds")
            setattr(cfg, k, float(raw[k]))
    if "registration_key" in raw:
        cfg.registration_key = str(raw["registration_key"])
    seen: set[tuple[str, str]] = set()
    for n, p in enumerate(raw.get("platforms", []), start=1):
        here = f"{where}: [[lti.platforms]] number {n}"
        if not isinstance(p, dict):
            raise ConfigError(f"{here} must be a table")
        bad = set(p) - set(_PLATFORM_KEYS)
        missing = [k for k in _PLATFORM_KEYS if k not in p and k not in _OPTIONAL]
        if bad:
            raise ConfigError(f"{here}: unknown key(s) {', '.join(sorted(bad))} (known: {', '.join(_PLATFORM_KEYS)})")
        if missing:
            raise ConfigError(f"{here}: missing {', '.join(missing)} (the LMS's tool registration page shows them)")
        if not NAME.match(str(p["name"])):
            raise ConfigError(f"{here}: name {p['name']!r} must be short lower-case letters, digits, '-', '_' or "
                              "'.' (people's ids start with it)")
        deps = p["deployment_ids"]
        if not isinstance(deps, list) or not deps or not all(isinstance(d, str) and d for d in deps):
            raise ConfigError(f"{here}: deployment_ids must list the deployment ids the LMS shows (strings)")
        frames = p.get("frame_origins", [])
        if not isinstance(frames, list):
            raise ConfigError(f"{here}: frame_origins must list web origins (https://school.instructure.com)")
        plat = Platform(str(p["name"]), str(p["issuer"]), str(p["client_id"]),
                        _url(p["auth_login_url"], "auth_login_url", here),
                        _url(p["auth_token_url"], "auth_token_url", here), _url(p["jwks_url"], "jwks_url", here),
                        tuple(deps), tuple(_url(f, "frame_origins", here).rstrip("/") for f in frames))
        if (plat.issuer, plat.client_id) in seen:
            raise ConfigError(f"{here}: issuer {plat.issuer} with client_id {plat.client_id} is listed twice")
        if any(q.name == plat.name for q in cfg.platforms):
            raise ConfigError(f"{here}: the name {plat.name!r} is used twice")
        seen.add((plat.issuer, plat.client_id))
        cfg.platforms.append(plat)
    return cfg
