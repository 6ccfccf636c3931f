"""The roster in (our CSV, or an LMS's class-list export), the sign-in links out (``role,id,name,token,url``).

Our CSV has ``id,name,email`` and optionally ``role`` (``student`` or
``staff``). Canvas's gradebook export (``Student, ID, SIS User ID, SIS Login
ID, Section``) and Moodle's participants export (``First name, Last name,
ID number, Email address``) are read by their own column names.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from autograder.errors import RosterError
from autograder.printable import printable
from autograder.report.csvfile import write_csv
from autograder.service.store import ServiceStore

LINK_COLUMNS = ("role", "id", "name", "token", "url")
DEMO_ROSTER = [("demo-student", "Demo Student", "student@example.edu", "student"),
               ("demo-student-2", "Second Student", "student2@example.edu", "student"),
               ("staff", "Course Staff", "staff@example.edu", "staff")]
_ID = ("id", "ID", "username", "Username", "ID number", "SIS User ID", "student_id")
_NAME = ("name", "Name", "Student", "Full name", "full_name")
_EMAIL = ("email", "Email", "Email address", "E-mail", "SIS Login ID")


@dataclass
class Link:
    role: str
    id: str
    name: str
    token: str
    url: str


def _pick(row: dict[str, str], names: tuple[str, ...]) -> str:
    for n in names:
        v = (row.get(n) or "").strip()
        if v:
            return v
    return ""


def read_roster(path: Path) -> list[tuple[str, str, str, str]]:
    """(id, name, email, role) per person; raises RosterError naming the row that has no id."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise RosterError(f"{path}: cannot read the roster ({e})") from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not any(c in reader.fieldnames for c in _ID):
        raise RosterError(f"{path}: the roster needs an id column ({', '.join(_ID[:5])}); it has "
                          f"{', '.join(printable(c) for c in reader.fieldnames or [])}")
    out = []
    for n, row in enumerate(reader, start=2):
        if (row.get("Student") or "").strip() == "Points Possible":
            continue  # Canvas's second line
        pid = _pick(row, _ID)
        if not pid:
            raise RosterError(f"{path}, row {n}: no id")
        name = _pick(row, _NAME) or " ".join(x for x in (_pick(row, ("First name",)), _pick(row, ("Last name",)))
                                             if x) or pid
        role = (row.get("role") or "student").strip().lower()
        if role not in ("student", "staff"):
            raise RosterError(f"{path}, row {n}: role must be student or staff, not {printable(role)!r}")
        out.append((pid, name, _pick(row, _EMAIL), role))
    return out


def load_roster(store: ServiceStore, people: list[tuple[str, str, str, str]]) -> None:
    for pid, name, email, role in people:
        store.put_person(pid, name, email, role)


def issue_links(store: ServiceStore, base_url: str, days: float, only: list[str] | None = None) -> list[Link]:
    """A fresh sign-in link for each person (or those in ``only``); earlier links stay valid until revoked."""
    out = []
    for p in store.people():
        if only is not None and p.id not in only:
            continue
        token = store.issue_token(p.id, days)
        out.append(Link(p.role, p.id, p.name, token, sign_in_url(base_url, token)))
    return out


def sign_in_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/signin?token={token}"


def write_links(path: Path, links: list[Link]) -> None:
    write_csv(path, LINK_COLUMNS, [[x.role, x.id, x.name, x.token, x.url] for x in links])
