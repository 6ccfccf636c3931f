"""The service holds against its own users: each attack of round four's service part, on the real server.

Each test starts `serve` (grading off: tests/service/front.py) in a process of its own and attacks it
over loopback: login CSRF, memory before any limit, slow connections, the check-then-act race, an oracle
on hidden results, headers on every response, a damaged store. The full disk, which needs real workers,
is in test_full_disk.py.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from autograder.service.store import ServiceStore
from tests.service.front import FrontServer
from tests.service.live import multipart, sign_in

NOTEBOOK = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "id": "a1",
     "source": "def shares_storage(a, b):\n    return True\n"}]}).encode()
DEMO = '[[assignments]]\nid = "demo"\n'


@pytest.fixture
def front(tmp_path):
    servers: list[FrontServer] = []

    def start(config: str = DEMO, **kw) -> FrontServer:
        root = tmp_path / f"s{len(servers)}"
        root.mkdir()
        s = FrontServer(root, config, **kw)
        servers.append(s)
        s.start()
        return s
    yield start
    for s in servers:
        s.stop()


def _csrf(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def _sign_in(c: httpx.Client, server: FrontServer, who: str) -> httpx.Response:
    """As a person's browser does: open the link, then press the confirm button (a POST with the page's form)."""
    return sign_in(c, server.tokens[who])


# ---------------------------------------------------------------------------------------------- login CSRF
def test_a_sign_in_link_changes_nothing_on_get_and_a_signed_in_browser_is_asked_before_switching(front):
    server = front()
    with server.browser() as alice:
        r = alice.get(f"/signin?token={server.tokens['ann']}")
        assert r.status_code == 200 and "tg_session" not in r.headers.get("set-cookie", "")
        assert "Your assignments" not in alice.get("/").text  # a GET signed nobody in
        assert _sign_in(alice, server, "ann").status_code == 303
        assert "Ann Student" in alice.get("/").text
        # mallory (ben) sends ann's browser to his own link: nothing changes, and she is asked
        r = alice.get(f"/signin?token={server.tokens['ben']}")
        assert r.status_code == 200 and "tg_session" not in r.headers.get("set-cookie", "")
        assert "Ann Student" in r.text and "Ben Student" in r.text and "switch" in r.text.lower()
        assert "Ann Student" in alice.get("/").text
        # a cross-site form posting ben's token: the browser sends no SameSite=Strict cookie with it
        form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', r.text))
        cross = httpx.Client(base_url=server.url, cookies={"tg_session": alice.cookies["tg_session"]})
        with cross:
            assert cross.post("/signin", data=form, headers={"Origin": "https://evil.example"}).status_code == 403
            assert cross.post("/signin", data={"token": server.tokens["ben"]}).status_code == 403
        assert "Ann Student" in alice.get("/").text
        # she presses the button herself: now she is ben
        assert alice.post("/signin", data=form, headers={"Origin": server.url}).status_code == 303
        assert "Ben Student" in alice.get("/").text


# ---------------------------------------------------------------------------------------------- memory
def _hostile(kind: str, size: int = 2 << 20) -> bytes:
    head = b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": ['
    n = (size - len(head) - 2) // 3
    if kind == "objects":
        return head + b",".join([b"{}"] * n) + b"]}"
    if kind == "arrays":
        return head + b'{"cell_type": "code", "source": [' + b",".join([b"[]"] * n) + b"]}]}"
    if kind == "deep":
        return head + b"[" * (size // 2) + b"]" * (size // 2) + b"]}"
    return head + b'{"cell_type": "markdown", "metadata": {}, "source": [' + b",".join([b'""'] * n) + b"]}]}"


def test_hostile_notebooks_are_refused_in_bounded_memory_and_count_against_the_rate_limit(front):
    server = front(limits="upload_kb = 2200\n")
    body = {k: multipart("x.ipynb", _hostile(k)) for k in ("objects", "arrays", "deep", "strings")}
    before = server.peak_rss()

    def send(i: int) -> tuple[int, str]:
        kind = list(body)[i % 4]
        with httpx.Client(timeout=120) as c:
            r = c.post(server.url + "/api/submissions", content=body[kind][0],
                       headers={**body[kind][1], **server.bearer(["ann", "ben", "cat", "prof"][i % 4])})
            return r.status_code, r.text
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(send, range(8)))
    grown = server.peak_rss() - before
    assert grown < 400 << 20, f"the server's peak memory grew by {grown >> 20} MiB"
    assert [code for code, _ in answers] == [400] * 8, answers
    assert all("notebook" in text for _, text in answers)
    with server.db() as db:
        assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 0


def test_the_bounds_hold_each_alone():
    from autograder.errors import RequestRefused
    from autograder.service.uploads import NotebookBounds, check_bounds

    check_bounds(NOTEBOOK, "ok.ipynb", NotebookBounds())
    for data, bounds, says in [
        (b'{"a": "' + "\u00e9".encode() * 100 + b'"}', NotebookBounds(max_text_bytes=50), "KB of text"),
        (b'{"a": ' + b"[" * 10 + b"]" * 10 + b"}", NotebookBounds(max_depth=8), "deeper than 8"),
        (b'{"a": [' + b",".join([b"1"] * 100) + b"]}", NotebookBounds(max_values=50), "more than 50 values"),
        (b'{"a": [1, 2', NotebookBounds(), "not a readable notebook"),
    ]:
        with pytest.raises(RequestRefused, match=says):
            check_bounds(data, "x.ipynb", bounds)


def test_refused_uploads_count_against_the_per_student_rate_limit(front):
    server = front(limits="submissions_per_minute = 3\n")
    broken, h = multipart("x.ipynb", b'{"cells": [')
    codes = [server.api("/api/submissions", "ann", broken, h)[0] for _ in range(5)]
    assert codes[:3] == [400, 400, 400] and codes[3:] == [429, 429], codes


# ---------------------------------------------------------------------------------------------- slow connections
def test_1100_slow_connections_under_a_1024_file_limit_leave_others_answered_and_the_log_small(front):
    server = front(files=1024, limits="header_seconds = 3\nconnections_per_address = 150\n")
    log_before = (server.root / "server.log").stat().st_size
    slow: list[socket.socket] = []
    stop = threading.Event()
    try:
        for i in range(1100):  # from 11 addresses, each under the per-address cap: the total cap must hold
            s = socket.socket()
            s.setblocking(False)
            s.bind((f"127.0.0.{2 + i % 11}", 0))
            try:
                s.connect(("127.0.0.1", server.port))
            except BlockingIOError:
                pass
            slow.append(s)

        def drip() -> None:
            while not stop.is_set():
                for s in slow:
                    try:
                        s.send(b"GET / HTTP/1.1\r\nX-Slow: a")
                    except OSError:
                        pass
                stop.wait(0.5)
        t = threading.Thread(target=drip, daemon=True)
        t.start()
        time.sleep(1.0)
        answered, began = [], time.monotonic()
        while time.monotonic() - began < 15 and len(answered) < 5:
            try:
                with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.99"), timeout=3) as c:
                    r = c.get(server.url + "/healthz")
                if r.status_code in (200, 503) and "ready" in r.text:
                    answered.append(time.monotonic() - began)
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        assert len(answered) == 5, f"others were not answered while 1,100 slow connections were open: {answered}"
        assert answered[0] < 8, answered
        assert server.proc.poll() is None
    finally:
        stop.set()
        for s in slow:
            s.close()
    time.sleep(1)
    grown = (server.root / "server.log").stat().st_size - log_before
    assert grown < 64 << 10, f"the log grew by {grown} bytes:\n{server.tail()[-1500:]}"


def test_a_body_that_trickles_in_is_answered_408(front):
    server = front(limits="body_seconds = 2\n")
    body, headers = multipart("a.ipynb", NOTEBOOK)
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall((f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.tokens['ann']}\r\n"
                   f"Content-Type: {headers['Content-Type']}\r\nContent-Length: {len(body)}\r\n\r\n").encode())
        began = time.monotonic()
        got = b""
        for b in body[:40]:
            s.sendall(bytes([b]))
            time.sleep(0.1)
            s.settimeout(0)
            try:
                got += s.recv(4096)
            except BlockingIOError:
                pass
            s.settimeout(10)
            if got:
                break
        if not got:
            try:
                got = s.recv(4096)
            except TimeoutError:
                pass
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert time.monotonic() - began < 6


# ---------------------------------------------------------------------------------------------- the race
@pytest.mark.parametrize("rule,accepted", [("max_attempts = 2", 2), ("cooldown_minutes = 10", 1)])
def test_concurrent_uploads_of_one_student_keep_the_attempt_limit_and_the_cooldown(front, rule, accepted):
    server = front(f"{DEMO}{rule}\n")
    body, headers = multipart("a.ipynb", NOTEBOOK)
    go = threading.Barrier(6)

    def send(_: int) -> int:
        go.wait()
        return server.api("/api/submissions", "ann", body, headers)[0]
    with ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(send, range(6)))
    assert codes.count(202) == accepted, codes
    assert set(codes) <= {202, 403, 429}, codes
    with server.db() as db:
        assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == accepted


# ---------------------------------------------------------------------------------------------- the oracle
def _grade(store: ServiceStore, sid: str, suites: str, points: float) -> None:
    job = next(j for j in store.jobs_of(sid) if j.suites == suites)
    with store.tx() as t:
        t.execute("UPDATE jobs SET state = 'running' WHERE id = ?", (job.id,))
    store.finish(job.id, {"submission": "s", "path": "p", "assignment": "demo", "exercises": [
        {"id": "basics", "title": "B", "max_points": 10, "tests": [
            {"nodeid": "t", "name": "t", "exercise": "basics", "max_points": 10, "points": points,
             "status": "passed" if points == 10 else "failed", "message": ""}]}]}, "v")


def _student_sees(server: FrontServer, c: httpx.Client) -> str:
    """Everything ann is shown about her attempts, with what differs between two uploads (ids, times) named."""
    listed = server.api("/api/submissions", "ann")[1]["submissions"]
    ids = {s["id"]: f"#{i}" for i, s in enumerate(listed)}
    seen = json.dumps(listed) + c.get("/").text + "".join(c.get(f"/submissions/{s}").text for s in ids)
    for sid, name in ids.items():
        seen = seen.replace(sid, name)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\"created\": [\d.]+|value=\"[^\"]+\"", "", seen)


def test_before_the_deadline_nothing_a_student_sees_depends_on_hidden_results(front):
    deadline = (dt.datetime.now(dt.UTC) + dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S")
    server = front(f'{DEMO}deadline = {deadline}\nhide_hidden_until_deadline = true\ncounts = "best"\n')
    body, headers = multipart("a.ipynb", NOTEBOOK)
    ids = [server.api("/api/submissions", "ann", body, headers)[1]["id"] for _ in range(2)]
    store = ServiceStore(server.data / "service.sqlite")
    for sid in ids:
        _grade(store, sid, "public", 5)
    _grade(store, ids[0], "hidden", 10)
    _grade(store, ids[1], "hidden", 2)
    with server.browser() as c:
        _sign_in(c, server, "ann")
        first = _student_sees(server, c)
        for sid, points in zip(ids, (2, 10), strict=True):  # a regrade turns the hidden ranking round
            store.queue_regrade([sid], "prof")
            job = store.jobs_of(sid)[-1]
            with store.tx() as t:
                t.execute("UPDATE jobs SET state = 'running' WHERE id = ?", (job.id,))
            store.finish(job.id, {"submission": "s", "path": "p", "assignment": "demo", "exercises": [
                {"id": "basics", "title": "B", "max_points": 10, "tests": [
                    {"nodeid": "t", "name": "t", "exercise": "basics", "max_points": 10, "points": points,
                     "status": "failed", "message": ""}]}]}, "v")
        assert _student_sees(server, c) == first
        assert "this one" not in first  # which attempt counts is decided by the hidden results, at the deadline
    store.close()


# ---------------------------------------------------------------------------------------------- headers
def test_every_response_carries_the_security_headers(front):
    server = front()
    staff = server.bearer("prof")
    with server.browser() as c:
        answers = {
            "405": c.put("/signout"),
            "static": c.get("/static/app.js"),
            "404": c.get("/no/such/page"),
            "401": c.get("/api/submissions"),
            "too many fields": c.post("/staff/regrade", headers=staff, data={f"f{i}": "x" for i in range(40)}),
            "healthz": c.get("/healthz"),
            "style": c.get("/style.css"),
            "bad method on the API": c.request("DELETE", "/api/submissions", headers=staff),
        }
    assert answers["405"].status_code == 405 and answers["404"].status_code == 404
    assert answers["too many fields"].status_code == 400 and answers["static"].status_code == 200
    for what, r in answers.items():
        assert "default-src 'none'" in r.headers.get("content-security-policy", ""), (what, r.headers)
        assert r.headers.get("x-content-type-options") == "nosniff", (what, r.headers)
        assert r.headers.get("x-frame-options") == "DENY", (what, r.headers)


# ---------------------------------------------------------------------------------------------- a damaged store
def _flip_last_wal_frame(wal: Path) -> None:
    data = bytearray(wal.read_bytes())
    page = int.from_bytes(data[8:12], "big")
    frames = (len(data) - 32) // (24 + page)
    assert frames > 0
    last = 32 + (frames - 1) * (24 + page)
    data[last + 24 + page // 2] ^= 0xFF  # one byte of the last frame's page: its checksum fails
    wal.write_bytes(bytes(data))


def test_a_damaged_wal_loses_no_submission_in_silence(front):
    server = front()
    body, headers = multipart("a.ipynb", NOTEBOOK)
    code, kept = server.api("/api/submissions", "ann", body, headers)
    assert code == 202
    other, h2 = multipart("b.py", b"def shares_storage(a, b):\n    return False\n")
    code, lost = server.api("/api/submissions", "ben", other, h2)
    assert code == 202
    server.kill9()
    wal = server.data / "service.sqlite-wal"
    assert wal.exists() and wal.stat().st_size > 0
    _flip_last_wal_frame(wal)
    gone_file = next(p for p in (server.data / "submissions").rglob("*") if p.is_file()
                     and p.read_bytes() == NOTEBOOK)
    gone_file.unlink()  # and one acknowledged submission's bytes are lost by the disk
    server.start(links=False)
    log = server.tail()
    assert "has no submission row" in log and "has no stored file" in log, log
    with server.db() as db:
        assert db.execute("SELECT COUNT(*) FROM submissions WHERE id = ?", (lost["id"],)).fetchone()[0] == 0
        problems = db.execute("SELECT kind, what FROM store_problems").fetchall()
    assert ("row_without_file", kept["id"]) in problems
    assert [k for k, _ in problems].count("file_without_row") == 1
    page = httpx.get(server.url + "/staff", headers=server.bearer("prof")).text
    assert "The store and the stored files disagree" in page and kept["id"] in page
    assert any(p.is_file() for p in (server.data / "submissions").rglob("*"))  # the orphan file is kept
