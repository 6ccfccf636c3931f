"""``torchgrader serve``: the submission service, with the bundled assignment and a demo roster by default."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from autograder.defaults import add_option, default_of
from autograder.errors import RosterError
from autograder.printable import printable
from autograder.report.files import writable_folder
from autograder.service.blobs import Blobs
from autograder.service.config import ServiceConfig, load_config
from autograder.service.grading import GradingPool
from autograder.service.lti.tool import LtiTool
from autograder.service.roster import DEMO_ROSTER, issue_links, load_roster, read_roster, write_links
from autograder.service.serving import ConnectionLimits, quiet_logging, raise_file_limit, uvicorn_settings
from autograder.service.store import ServiceStore, StoreProblem

DB_NAME = "service.sqlite"


def open_service(cfg: ServiceConfig, data: Path) -> Any:
    """The web tier's state over the store in ``data`` (its assignments loaded: errors name the file)."""
    from autograder.service.web.site import Service

    data = writable_folder(Path(data), "--data")  # a path that cannot hold the store is said before anything
    store = ServiceStore(data / DB_NAME)
    blobs = Blobs(data / "submissions")
    report_store_problems(store.reconcile(blobs.root), store)
    pool = GradingPool(cfg, store, blobs, data / "logs")
    pool.load()
    svc = Service(cfg, store, blobs, pool)

    def maxima(aid: str) -> tuple[str, float]:  # an assignment's title and maximum score, for the LMS's gradebook
        a = pool.assignments.get(aid)
        return (a.title, float(a.max_total)) if a is not None else (aid, 0.0)
    svc.lti = LtiTool(cfg, store, data / "lti", maxima)
    return svc


def report_store_problems(new: list[StoreProblem], store: ServiceStore, out: Any = sys.stdout) -> None:
    """Say at start what the reconciliation of rows and files found (staff see the list on the dashboard)."""
    for p in new:
        print(f"torchgrader serve: the store and the files disagree: {p.detail}", file=out, flush=True)
    known = len(store.store_problems())
    if known:
        print(f"torchgrader serve: {known} disagreement(s) between the store and the stored files are kept for "
              f"staff (the dashboard lists them; nothing was deleted)", file=out, flush=True)


def prepare_people(svc: Any, roster: Path | None, links: Path | None, out: Any = sys.stdout,
                   staff_link: str | None = None, err: Any = sys.stderr) -> None:
    """Load the roster (or the demo one into an empty store), then issue and print or write the links.

    Whoever starts the service always has a way in: ``staff_link`` ("" for every staff member on the roster,
    or one id, added as staff when absent) prints a fresh staff sign-in link, and a roster with no staff
    says so, with what to do, instead of starting a service nobody can manage.
    """
    store, cfg = svc.store, svc.cfg
    if roster:
        load_roster(store, read_roster(roster))
    elif not store.people():
        load_roster(store, DEMO_ROSTER)
    demo = {p.id for p in store.people()} <= {d[0] for d in DEMO_ROSTER}
    if staff_link:
        known = store.person(staff_link)
        if known is None:
            store.put_person(staff_link, staff_link, "", "staff")
        elif not known.staff:
            raise RosterError(f"--staff-link {printable(staff_link)}: {printable(staff_link)} is on the roster "
                               "as a student; give a staff member's id, or none for every staff member's link")
    staff = [p.id for p in store.people("staff")]
    if links:
        issued = issue_links(store, cfg.url(), cfg.link_days)
        write_links(links, issued)
        print(f"sign-in links for {len(issued)} people ({len(staff)} staff) written to {links} "
              "(role,id,name,token,url)", file=out)
    if staff_link is not None and staff:
        for link in issue_links(store, cfg.url(), cfg.link_days, only=[staff_link] if staff_link else staff):
            print(f"staff link ({link.name}, {link.id}): {link.url}", file=out)
    elif demo and not links:
        for link in issue_links(store, cfg.url(), cfg.link_days, only=["demo-student", "staff"]):
            print(f"demo {link.role} link ({link.name}): {link.url}", file=out)
    elif not links:
        print(f"{len(store.people())} people on the roster ({len(staff)} staff); pass --links FILE to issue "
              "their sign-in links, or --staff-link for a staff link now", file=out)
    if not staff:
        print(f"warning: {roster or 'the roster'} has no staff, so nobody can open the staff dashboard. Add a "
              "row with role staff (columns id,name,email,role; see docs/service.md), or start with "
              "--staff-link YOUR_ID to add yourself as staff and print your sign-in link.", file=err)


def cmd_serve(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    if args.host:
        cfg.host = args.host
    if args.port:
        cfg.port = args.port
    serve(cfg, Path(args.data), args.roster, args.links, staff_link=args.staff_link)
    return 0


def serve(cfg: ServiceConfig, data: Path, roster: Path | None = None, links: Path | None = None, *,
          staff_link: str | None = None, grade: bool = True) -> None:
    """Open the store, load the people, and serve until stopped (``grade=False``: no workers, the queue only
    fills; the tests of the web tier run the real server so)."""
    import uvicorn

    from autograder.service.web.app import build_app

    raise_file_limit()
    quiet_logging()
    svc = open_service(cfg, data)
    prepare_people(svc, roster, links, staff_link=staff_link)
    print(f"torchgrader serve: {', '.join(p.id for p in cfg.assignments)} on {cfg.url()} "
          f"({cfg.workers} warm {cfg.backend} worker(s) per assignment; data in {data})", flush=True)
    print_lti(svc.lti)
    uvicorn.Server(uvicorn_config(cfg, build_app(svc, grade=grade))).run()


def print_lti(lti: LtiTool, out: Any = sys.stdout) -> None:
    """The addresses an LMS admin registers the tool with (docs/service.md walks through each LMS)."""
    u = lti.urls()
    print(f"LTI 1.3: login {u['login']}  launch/redirect {u['launch']}  keys {u['jwks']}\n"
          f"LTI 1.3: Canvas configuration URL {u['canvas']}\n"
          f"LTI 1.3: dynamic registration URL (Moodle, Brightspace; keep it private) {u['register']}\n"
          f"LTI 1.3: {len(lti.platforms())} platform(s) registered", file=out, flush=True)


def uvicorn_config(cfg: ServiceConfig, app: Any) -> Any:
    """uvicorn's settings: X-Forwarded-For/-Proto are believed only from ``trusted_proxies`` (none by default);
    connections, headers' deadlines and the log bounded as ``serving.py`` says."""
    import uvicorn

    proxies = ",".join(cfg.trusted_proxies)
    limits = ConnectionLimits(per_address=cfg.connections_per_address, header_seconds=cfg.header_seconds,
                              exempt=set(cfg.trusted_proxies))
    return uvicorn.Config(app, host=cfg.host, port=cfg.port, log_level="warning", proxy_headers=bool(proxies),
                          forwarded_allow_ips=proxies or None, server_header=False, **uvicorn_settings(limits))


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, help="the service's TOML file (assignments, policies, workers, limits; "
                                               "see docs/service.md); default: the bundled assignment")
    p.add_argument("--host", help=f"listen address (default: the config's, else {default_of(ServiceConfig, 'host')})")
    p.add_argument("--port", type=int, help=f"listen port (default: the config's, else "
                                            f"{default_of(ServiceConfig, 'port')})")
    add_option(p, "--data", default="torchgrader-data", help="where the store and the submissions live")
    p.add_argument("--roster", type=Path, help="people as CSV: id,name,email[,role], or an LMS class-list export")
    p.add_argument("--links", type=Path, help="write a fresh sign-in link per person to this CSV "
                                              "(role,id,name,token,url) for a mail merge")
    p.add_argument("--staff-link", nargs="?", const="", metavar="ID",
                   help="print a fresh staff sign-in link at start: for ID (added as staff when not on the "
                        "roster), or with no ID for every staff member on the roster")
