"""The LTI side of one running service: its platforms, keys, tables, platform client, outbox and roster sync.

Made by ``command.open_service`` beside the web tier's ``Service`` (``svc.lti``);
the routes (``routes.py``) and the staff's LMS page use it. A launch that has
been verified but not yet bound to the browser is held in memory only (two
minutes): a refused or abandoned launch leaves nothing in the store.
"""

from __future__ import annotations

import re
import secrets
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autograder.errors import LmsError
from autograder.printable import printable
from autograder.service.config import ServiceConfig
from autograder.service.lti.config import Platform
from autograder.service.lti.keys import ToolKeys
from autograder.service.lti.outbox import Outbox
from autograder.service.lti.platform import PlatformClient
from autograder.service.lti.tables import Context, Login, LtiTables, digest
from autograder.service.lti.verify import AGS, NRPS, Launch, PlatformKeys, role_of
from autograder.service.store import ServiceStore

HOLD_SECONDS = 120.0
SAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass
class Held:
    """A verified launch waiting for its browser to prove it started the login (or a code for a new window)."""

    launch: Launch
    login: Login
    role: str
    expires: float
    data: dict[str, Any] = field(default_factory=dict)


def person_id(platform: Platform, sub: str) -> str:
    """``NAME-SUB`` for an LMS user: the platform's short name, then its ``sub`` (unsafe characters and
    over-long ids replaced by a digest, so the id is always a safe, unique path segment)."""
    clean = SAFE.sub("_", sub)
    if clean != sub or len(clean) > 48:
        clean = clean[:24] + "_" + digest(sub)[:16]
    return f"{platform.name}-{clean}"


class LtiTool:
    def __init__(self, cfg: ServiceConfig, store: ServiceStore, folder: Path,
                 maxima: Callable[[str], tuple[str, float]]) -> None:
        self.cfg, self.store, self.folder = cfg, store, Path(folder)
        self.tables = LtiTables(store)
        self.keys = ToolKeys(self.folder / "tool-keys.json")
        self.platform_keys = PlatformKeys(cfg.lti.http_timeout)
        self.client = PlatformClient(self.keys, cfg.lti.http_timeout)
        self.maxima = maxima
        self.registration_key = cfg.lti.registration_key or self._registration_key()
        self.outbox = Outbox(cfg, store, self.tables, self.client, self.platform, maxima, cfg.url())
        self._held: dict[str, Held] = {}
        self._lock = threading.Lock()

    def _registration_key(self) -> str:
        path = self.folder / "registration-key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(18))
            path.chmod(0o600)
        return path.read_text().strip()

    # ------------------------------------------------------------------ platforms
    def platforms(self) -> list[Platform]:
        return [*self.cfg.lti.platforms, *self.tables.platforms()]

    def platform(self, issuer: str, client_id: str | None) -> Platform | None:
        """The registration of ``issuer`` and ``client_id`` (the one of ``issuer`` when it has only one and no
        client id is given)."""
        mine = [p for p in self.platforms() if p.issuer == issuer]
        if client_id:
            return next((p for p in mine if p.client_id == client_id), None)
        return mine[0] if len(mine) == 1 else None

    def platform_for_aud(self, issuer: str, aud: Any) -> Platform | None:
        auds = aud if isinstance(aud, list) else [aud]
        return next((p for p in self.platforms() if p.issuer == issuer and p.client_id in auds), None)

    def urls(self) -> dict[str, str]:
        base = self.cfg.url()
        return {"login": f"{base}/lti/login", "launch": f"{base}/lti/launch", "jwks": f"{base}/lti/jwks.json",
                "canvas": f"{base}/lti/canvas.json", "register": f"{base}/lti/register/{self.registration_key}",
                "deep_linking": f"{base}/lti/launch"}

    def origin(self) -> str:
        u = urlsplit(self.cfg.url())
        return f"{u.scheme}://{u.netloc}"

    # ------------------------------------------------------------------ held launches (memory only)
    def hold(self, held: Held) -> str:
        h = secrets.token_urlsafe(24)
        now = time.time()
        with self._lock:
            for k in [k for k, v in self._held.items() if v.expires < now]:
                del self._held[k]
            self._held[h] = held
        return h

    def take(self, handle: str) -> Held | None:
        with self._lock:
            held = self._held.pop(handle, None)
        return held if held is not None and held.expires >= time.time() else None

    def peek(self, handle: str) -> Held | None:
        with self._lock:
            held = self._held.get(handle)
        return held if held is not None and held.expires >= time.time() else None

    # ------------------------------------------------------------------ what a launch leaves in the store
    def assignment_of(self, launch: Launch) -> str:
        """The assignment a link opens: its ``assignment`` custom parameter (set by deep linking), else the
        first of the config."""
        want = str(launch.custom.get("assignment", ""))
        return want if self.cfg.policy(want) else self.cfg.assignments[0].id

    def admit(self, held: Held) -> str:
        """Store what a bound launch says: the person (made on first launch), the context, membership, the line
        item; returns the person's id."""
        launch, p = held.launch, held.launch.platform
        c = launch.claims
        name = printable(str(c.get("name") or " ".join(str(c.get(k, "")) for k in ("given_name", "family_name"))
                             ).strip())[:120]
        email = printable(str(c.get("email") or ""))[:200]
        pid = self.tables.upsert_person(p.issuer, launch.sub, person_id(p, launch.sub), name, email, held.role)
        ctx = launch.context
        if ctx.get("id"):
            cid = str(ctx["id"])
            ags: dict[str, Any] = c[AGS] if isinstance(c.get(AGS), dict) else {}
            nrps: dict[str, Any] = c[NRPS] if isinstance(c.get(NRPS), dict) else {}
            self.tables.put_context(p.issuer, cid, p.client_id, launch.deployment_id,
                                    printable(str(ctx.get("title") or ctx.get("label") or cid))[:200],
                                    str(nrps.get("context_memberships_url") or ""),
                                    str(ags.get("lineitems") or ""), [str(s) for s in ags.get("scope", [])])
            self.tables.put_member(p.issuer, cid, pid, held.role)
            if launch.message_type == "LtiResourceLinkRequest" and (ags.get("lineitem") or ags.get("lineitems")):
                aid = self.assignment_of(launch)
                if ags.get("lineitem"):
                    self.tables.put_lineitem(p.issuer, cid, aid, str(ags["lineitem"]))
                elif self.tables.lineitem(p.issuer, cid, aid) is None:
                    self.tables.put_lineitem(p.issuer, cid, aid, "")  # found or created when first posted
            self.outbox.wake()
        return pid

    # ------------------------------------------------------------------ roster (NRPS)
    def sync_roster(self, issuer: str, context: str) -> str:
        """Read the context's members from the LMS: new people are added, known ones updated, and those no
        longer listed (or listed as Inactive/Deleted) marked left. Returns what happened, in words."""
        c = self.tables.context(issuer, context)
        p = self.platform(issuer, c.client_id) if c else None
        if c is None or p is None:
            return "no such LMS course"
        if not c.memberships_url:
            answer = "the LMS gave no roster service (Names and Role Provisioning) for this course"
            self.tables.synced(issuer, context, answer)
            return answer
        try:
            members = self.client.members(p, c.memberships_url)
        except LmsError as e:
            self.tables.synced(issuer, context, f"failed: {e.answer}")
            return f"the roster could not be read: {e.answer}"
        staying, added = set(), 0
        for m in members:
            sub, role = str(m.get("user_id", "")), role_of([str(r) for r in m.get("roles", [])])
            if not sub or role is None or str(m.get("status", "Active")) != "Active":
                continue
            known = self.tables.person_of(issuer, sub)
            name = printable(str(m.get("name") or " ".join(str(m.get(k, "")) for k in ("given_name", "family_name"))
                                 ).strip())[:120]
            pid = self.tables.upsert_person(issuer, sub, person_id(p, sub), name,
                                            printable(str(m.get("email") or ""))[:200], role)
            self.tables.put_member(issuer, context, pid, role)
            staying.add(pid)
            added += known is None
        gone = self.tables.mark_left(issuer, context, staying)
        answer = f"{len(staying)} active member(s), {added} new, {len(gone)} marked left"
        self.tables.synced(issuer, context, answer)
        self.outbox.wake()
        return answer

    def sync_later(self, issuer: str, context: str) -> None:
        def run() -> None:
            try:
                self.sync_roster(issuer, context)
            except Exception as e:  # noqa: BLE001 - a failed sync is said on the dashboard, never a crash
                self.tables.synced(issuer, context, f"failed: {type(e).__name__}: {printable(str(e))[:200]}")
                print(f"torchgrader serve: roster sync of {context} failed: {e}", file=sys.stderr, flush=True)
        threading.Thread(target=run, name="lti-roster", daemon=True).start()

    def summary(self) -> dict[str, Any]:
        """What the staff dashboard says of the LMS: courses, and each score's latest state counted."""
        latest = self.tables.scores()
        failing = [s for s in latest if s.state == "failed"]
        return {"courses": len(self.tables.contexts()), "contexts": self.tables.contexts(),
                "sent": sum(s.state == "sent" for s in latest),
                "pending": sum(s.state == "pending" for s in latest), "failed": len(failing),
                "last_failure": failing[0].answer if failing else ""}

    def contexts(self) -> list[Context]:
        return self.tables.contexts()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.outbox.start()

    def stop(self) -> None:
        self.outbox.stop()
