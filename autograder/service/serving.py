"""How the service meets the network with no reverse proxy in front: bounded connections, deadlines, quiet logs.

The docs keep a proxy as the front line; this is what holds without one.
1,100 slow connections against a 1,024 open-file limit once left every
other request unanswered, and the log grew by 244 MiB in 40 s. So:

- every connection beyond ``per_address`` from one address, or beyond
  ``total`` in all (fewer than the open-file limit leaves: SQLite, the logs
  and the workers' pipes need theirs), is answered 503 and closed at once;
- a request's headers must arrive within ``header_seconds`` (from the
  connection, or from the end of the previous response), else the
  connection is closed: a client that trickles a byte at a time holds a
  file for seconds, not forever (the body's deadline is the app's:
  ``middleware.BodyDeadline``);
- uvicorn's own limits are set (``limit_concurrency``, the keep-alive
  timeout, h11's bound on an incomplete request);
- each repeated log line is written once per minute, with how many were
  left out.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

LOG_INTERVAL = 60.0  # seconds: each repeated log line once per interval
FILE_RESERVE = 200  # open files kept for the store, the logs, the workers' pipes and the static files
MAX_CONNECTIONS = 2000
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 5\r\n"
        b"x-content-type-options: nosniff\r\ncontent-security-policy: default-src 'none'\r\n"
        b"connection: close\r\ncontent-length: 58\r\n\r\n"
        b"the server has too many open connections: try again in 5 s")


def raise_file_limit() -> int:
    """Raise this process's soft open-file limit to its hard one; return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return int(soft)


@dataclass
class ConnectionLimits:
    per_address: int = 200  # a class behind one NAT shares an address: a browser holds a few connections
    header_seconds: float = 10.0
    total: int = 0  # 0: from the open-file limit (less FILE_RESERVE), at most MAX_CONNECTIONS
    exempt: set[str] = field(default_factory=set)  # the trusted proxies: every client arrives through them

    def resolved_total(self) -> int:
        if self.total:
            return self.total
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        soft = MAX_CONNECTIONS + FILE_RESERVE if soft == resource.RLIM_INFINITY else soft
        return max(16, min(MAX_CONNECTIONS, int(soft) - FILE_RESERVE))


def protocol_class(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol, with the connection caps and the header deadline of ``limits`` (one server)."""
    total = limits.resolved_total()
    per_address: Counter[str] = Counter()
    live: set[Guarded] = set()
    sweeping: list[asyncio.TimerHandle] = []

    def sweep(loop: asyncio.AbstractEventLoop) -> None:
        """Once a second: close each connection that has waited longer than the deadline for a request's
        headers (or for a next request)."""
        now = time.monotonic()
        for proto in list(live):
            cycle = proto.cycle
            if cycle is not None and not cycle.response_complete:  # a request in hand: the app's deadlines
                proto.tg_waiting_since = None
            elif proto.tg_waiting_since is None:
                proto.tg_waiting_since = now
            elif now - proto.tg_waiting_since > limits.header_seconds and not proto.transport.is_closing():
                proto.transport.close()
        sweeping[:] = [loop.call_later(1.0, sweep, loop)] if live else []

    class Guarded(H11Protocol):
        tg_waiting_since: float | None = None
        tg_address: str = ""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.tg_address = self.client[0] if self.client else ""
            self.tg_waiting_since = time.monotonic()
            per_address[self.tg_address] += 1
            live.add(self)
            over = len(live) > total or (self.tg_address not in limits.exempt
                                         and per_address[self.tg_address] > limits.per_address)
            if over:
                transport.write(BUSY)
                transport.close()
            elif not sweeping:
                sweeping.append(self.loop.call_later(1.0, sweep, self.loop))

        def connection_lost(self, exc: Exception | None) -> None:
            if self in live:
                live.discard(self)
                per_address[self.tg_address] -= 1
                if per_address[self.tg_address] <= 0:
                    del per_address[self.tg_address]
            super().connection_lost(exc)

    return Guarded


class OncePerInterval(logging.Filter):
    """Let each distinct log line through once per ``interval``; the next one says how many were left out."""

    def __init__(self, interval: float = LOG_INTERVAL) -> None:
        super().__init__()
        self.interval = interval
        self.seen: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        last, skipped = self.seen.get(key, (-1e18, 0))
        if now - last < self.interval:
            self.seen[key] = (last, skipped + 1)
            return False
        if len(self.seen) > 10_000:  # distinct lines are bounded too
            self.seen.clear()
        self.seen[key] = (now, 0)
        if skipped:
            record.msg = f"{record.msg} [{skipped} more like it in the last {self.interval:g} s left out]"
        return True


def quiet_logging(interval: float = LOG_INTERVAL) -> logging.Handler:
    """One handler on the root logger (uvicorn's and asyncio's loggers reach it), repeats filtered."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(OncePerInterval(interval))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).propagate = True
    return handler


def uvicorn_settings(limits: ConnectionLimits) -> dict[str, Any]:
    """uvicorn.Config's arguments that bound what one client, or many, can hold."""
    total = limits.resolved_total()
    return {"http": protocol_class(limits), "limit_concurrency": total, "timeout_keep_alive": 5,
            "h11_max_incomplete_event_size": 16 * 1024, "log_config": None, "timeout_graceful_shutdown": 10}
