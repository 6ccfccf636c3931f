"""The service's one config file (TOML): the assignments and their policies, the workers, the limits.

Every key has a default, so ``torchgrader serve`` runs with none: the bundled
assignment, one warm worker per core (as ``torchgrader grade``), 127.0.0.1:8000. A key this module does not know
is an error that names it (a typo must not silently turn a policy off).

.. code-block:: toml

    [server]
    host = "127.0.0.1"
    port = 8000
    public_url = "https://grader.example.edu"  # what the sign-in links start with
    trusted_proxies = ["127.0.0.1"]  # X-Forwarded-For / -Proto are believed only from these

    [grading]
    course = "."  # the folder holding assignments/ and solutions/
    backend = "process"  # or "docker", "podman", "dask"
    scheduler = ""  # dask: the scheduler's address (tcp://host:8786)
    workers = 2  # warm workers per assignment (dask: submissions in flight); default: one per core, as the batch
    queue_limit = 1000  # students' submissions waiting, all together; past it: 503 with Retry-After
    student_queue_limit = 2  # one student's submissions waiting; past it: 429 ("wait for your feedback")
    nice = 10  # the workers' and their sandboxes' CPU priority: this many steps below the web tier's (0: the same)
    watchdog_margin = 120  # a job is stopped past the sum of its exercises' timeouts plus this (seconds)
    devices = ["cuda:0", "cpu"]  # local and container workers' devices, one per worker (default: all "cpu")
    gpu_resource = "GPU"  # dask: the worker resource that declares a GPU (dask worker --resources GPU=1)

    [limits]
    upload_kb = 2048
    submissions_per_minute = 6  # per student
    requests_per_minute = 600  # per address
    connections_per_address = 200  # open at once from one address (trusted proxies: no cap)
    header_seconds = 10  # a request's headers must arrive within this, its body within body_seconds
    body_seconds = 60
    parses_at_once = 2  # uploaded notebooks parsed at the same time

    [course]
    late_days = 3  # each student's bank of late days for the whole course (0: none), spent before any penalty

    [[assignments]]
    id = "pytorch-fundamentals"
    deadline = 2026-12-15T23:59:00
    timezone = "Europe/Berlin"
    counts = "best"  # or "last"
    max_attempts = 10  # 0: no limit
    cooldown_minutes = 5
    late = "penalty"  # or "refuse"
    late_penalty_per_day = 10  # percent of the score per started day (beyond the student's late days: [course])
    regrade_requests_until = 2027-01-10T23:59:00  # students may ask for a regrade until then (unset: never)
    hide_hidden_until_deadline = true
    canvas_id = 4711  # the Canvas assignment's number (its address ends /assignments/4711)
    cpu_fallback = true  # exercises that ask for CUDA (gpu = true) may be graded on CPU when no GPU worker runs
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.batch import DEFAULT_IMAGE
from autograder.batch.backends import DEFAULT_BACKEND
from autograder.defaults import default_of
from autograder.errors import ConfigError
from autograder.grade import default_jobs
from autograder.options import Budget
from autograder.sandbox.isolation import Limits
from autograder.service.lti.config import LtiConfig, parse_lti

DEFAULT_ASSIGNMENT = "pytorch-fundamentals"
_DEVICE = re.compile(r"cpu|cuda:[0-9]{1,2}")


@dataclass
class Policy:
    """One assignment's rules, shown to students before they submit."""

    id: str
    deadline: dt.datetime | None = None  # aware (in ``timezone``); None: no deadline
    timezone: str = "UTC"
    counts: str = "best"  # which attempt counts: "best" or "last"
    max_attempts: int = 0  # 0: no limit; refused uploads and grader errors do not count
    cooldown_minutes: float = 0.0
    late: str = "refuse"  # "refuse" or "penalty"
    late_penalty_per_day: float = 10.0  # percent of the score, per started day late
    hide_hidden_until_deadline: bool = False  # before it, students see the public tests' results only
    canvas_id: int = 0  # the Canvas assignment's number (in its address): the Canvas CSV's column names it
    # an exercise that asks for CUDA (exercise.toml `gpu = true`) is graded by a worker that declares a GPU; with
    # none, true: on CPU (the exercise's CPU fallback; the feedback says so), false: it waits for one
    cpu_fallback: bool = True
    # students may ask staff to regrade a test or an exercise of a graded submission until then (None: never)
    regrade_requests_until: dt.datetime | None = None


@dataclass
class ServiceConfig:
    assignments: list[Policy] = field(default_factory=lambda: [Policy(DEFAULT_ASSIGNMENT)])
    course: Path | None = None  # None: found as `grade` finds it
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str = ""  # "": http://host:port
    trusted_proxies: list[str] = field(default_factory=list)
    backend: str = DEFAULT_BACKEND
    scheduler: str = ""  # dask only: the scheduler's address
    workers: int = field(default_factory=default_jobs)  # one warm worker per core, as `torchgrader grade`
    queue_limit: int = 1000  # students' submissions waiting, all together (each student capped: below)
    # one student's submissions waiting or being graded: nobody fills the shared queue for everyone else
    student_queue_limit: int = 2
    nice: int = 10  # the workers' (and their sandboxes') nice, relative to the web tier's: it keeps answering at once
    watchdog_margin: float = 120.0  # seconds past the sum of the assignment's exercise timeouts: the job is stopped
    devices: list[str] = field(default_factory=list)  # per local/container worker: "cpu" or "cuda:N"; [] all cpu
    gpu_resource: str = "GPU"  # dask: the worker resource naming a GPU (`dask worker --resources GPU=1`)
    docker_image: str = DEFAULT_IMAGE
    allow_unisolated: bool = False
    # a sandbox's limits and time budget, as `grade`'s --memory-gb, --cell-timeout, --submission-timeout: the
    # same defaults, read from where they are written
    memory_gb: float = default_of(Limits, "memory_bytes") / 2**30
    cell_timeout: float = default_of(Budget, "cell_seconds")
    submission_timeout: float = default_of(Budget, "submission_seconds")
    upload_kb: int = 2048
    submissions_per_minute: int = 6
    requests_per_minute: int = 600
    link_days: float = 180.0  # how long a sign-in link's token is valid
    connections_per_address: int = 200  # open connections from one address (trusted proxies: no cap)
    header_seconds: float = 10.0  # a request's headers must arrive within this
    body_seconds: float = 60.0  # a request's body must arrive within this
    parses_at_once: int = 2  # uploaded notebooks parsed at the same time (each may take ~100 MB while parsed)
    session_hours: float = 12.0
    # [course] late_days: each student's bank of late days for the course, spent (whole days, rounded up) on the
    # counting attempts of late = "penalty" assignments before any penalty applies (policy.course_standings)
    late_days: int = 0
    lti: LtiConfig = field(default_factory=LtiConfig)  # the [lti] section: platforms and settings (lti/config.py)

    def url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    def device(self, slot: int) -> str:
        """The device local or container worker ``slot`` declares ("cpu" unless ``devices`` names another)."""
        return self.devices[slot] if slot < len(self.devices) else "cpu"

    def policy(self, assignment: str) -> Policy | None:
        return next((p for p in self.assignments if p.id == assignment), None)


_SECTIONS = {
    "server": ("host", "port", "public_url", "trusted_proxies"),
    "grading": ("course", "backend", "scheduler", "workers", "queue_limit", "student_queue_limit", "nice",
                "watchdog_margin", "devices", "gpu_resource", "docker_image", "allow_unisolated",
                "memory_gb", "cell_timeout", "submission_timeout"),
    "limits": ("upload_kb", "submissions_per_minute", "requests_per_minute", "link_days", "session_hours",
               "connections_per_address", "header_seconds", "body_seconds", "parses_at_once"),
    "course": ("late_days",),
}
_POLICY_KEYS = {f.name for f in fields(Policy)}


def _deadline(value: Any, zone: ZoneInfo, where: str) -> dt.datetime:
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            raise ConfigError(f"{where}: deadline {value!r} is not a date and time (2026-12-15T23:59:00)") from None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time(23, 59, 59))
    if not isinstance(value, dt.datetime):
        raise ConfigError(f"{where}: deadline must be a date and time (2026-12-15T23:59:00)")
    return value.replace(tzinfo=zone) if value.tzinfo is None else value


def _policy(raw: Any, where: str) -> Policy:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        raise ConfigError(f"{where}: each [[assignments]] entry needs an `id` (an assignment folder's name)")
    unknown = set(raw) - _POLICY_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} in [[assignments]] "
                          f"(known: {', '.join(sorted(_POLICY_KEYS))})")
    p = Policy(id=raw["id"])
    tz = str(raw.get("timezone", p.timezone))
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}: unknown time zone {tz!r} (an IANA name such as Europe/Berlin)") from None
    p.timezone = tz
    if raw.get("deadline") is not None:
        p.deadline = _deadline(raw["deadline"], zone, where)
    if raw.get("regrade_requests_until") is not None:
        p.regrade_requests_until = _deadline(raw["regrade_requests_until"], zone, where)
    p.counts = str(raw.get("counts", p.counts))
    if p.counts not in ("best", "last"):
        raise ConfigError(f"{where}: counts must be \"best\" or \"last\", not {p.counts!r}")
    p.late = str(raw.get("late", p.late))
    if p.late not in ("refuse", "penalty"):
        raise ConfigError(f"{where}: late must be \"refuse\" or \"penalty\", not {p.late!r}")
    try:
        p.max_attempts = int(raw.get("max_attempts", p.max_attempts))
        p.cooldown_minutes = float(raw.get("cooldown_minutes", p.cooldown_minutes))
        p.late_penalty_per_day = float(raw.get("late_penalty_per_day", p.late_penalty_per_day))
        p.canvas_id = int(raw.get("canvas_id", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: max_attempts, cooldown_minutes, late_penalty_per_day and canvas_id are "
                          "numbers") from None
    p.hide_hidden_until_deadline = bool(raw.get("hide_hidden_until_deadline", p.hide_hidden_until_deadline))
    p.cpu_fallback = bool(raw.get("cpu_fallback", p.cpu_fallback))
    return p


def parse_config(data: dict[str, Any], where: str = "the service config") -> ServiceConfig:
    cfg = ServiceConfig()
    unknown = set(data) - {*_SECTIONS, "assignments", "lti"}
    if unknown:
        raise ConfigError(f"{where}: unknown section(s) {', '.join(sorted(unknown))} "
                          f"(known: {', '.join([*_SECTIONS, 'assignments', 'lti'])})")
    if "lti" in data:
        cfg.lti = parse_lti(data["lti"], where)
    defaults = ServiceConfig()
    for section, keys in _SECTIONS.items():
        raw = data.get(section, {})
        bad = set(raw) - set(keys)
        if bad:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(bad))} in [{section}] "
                              f"(known: {', '.join(keys)})")
        for k, v in raw.items():
            want = type(getattr(defaults, k)) if getattr(defaults, k) is not None else str
            if k == "course":
                setattr(cfg, k, Path(str(v)))
            elif want is float and isinstance(v, int | float) and not isinstance(v, bool):
                setattr(cfg, k, float(v))
            elif not isinstance(v, want) or (want is int and isinstance(v, bool)):
                raise ConfigError(f"{where}: [{section}] {k} must be a {want.__name__}, not {v!r}")
            else:
                setattr(cfg, k, v)
    if "assignments" in data:
        raw_list = data["assignments"]
        if not isinstance(raw_list, list) or not raw_list:
            raise ConfigError(f"{where}: [[assignments]] must list at least one assignment")
        cfg.assignments = [_policy(r, where) for r in raw_list]
        ids = [p.id for p in cfg.assignments]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"{where}: an assignment is listed twice in [[assignments]]")
    if cfg.backend == "dask" and not cfg.scheduler:
        raise ConfigError(f"{where}: [grading] backend = \"dask\" needs scheduler = \"tcp://HOST:8786\" "
                          "(the Dask scheduler's address)")
    if cfg.late_days < 0:
        raise ConfigError(f"{where}: [course] late_days must be 0 (no bank) or more")
    if cfg.workers < 1 or cfg.queue_limit < 1 or cfg.student_queue_limit < 1:
        raise ConfigError(f"{where}: [grading] workers, queue_limit and student_queue_limit must be at least 1")
    if not 0 <= cfg.nice <= 19:
        raise ConfigError(f"{where}: [grading] nice must be from 0 (the web tier's priority) to 19 (the lowest)")
    bad_devices = [d for d in cfg.devices if not isinstance(d, str) or not _DEVICE.fullmatch(d)]
    if bad_devices or (cfg.devices and len(cfg.devices) != cfg.workers):
        raise ConfigError(f"{where}: [grading] devices lists one device per worker ({cfg.workers}), each \"cpu\" "
                          f"or \"cuda:N\" (got {cfg.devices!r})")
    return cfg


def load_config(path: Path | None) -> ServiceConfig:
    """The config in ``path`` (relative paths in it are relative to its folder); the defaults when None."""
    if path is None:
        return ServiceConfig()
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    cfg = parse_config(data, str(path))
    if cfg.course is not None and not cfg.course.is_absolute():
        cfg.course = (path.parent / cfg.course).resolve()
    return cfg
