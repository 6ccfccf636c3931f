"""The routes through Starlette's TestClient, with no workers running (the queue only fills up).

Who may see what, the sign-in exchange, CSRF, limits, refusals with their
messages, and path traversal / id guessing on every route. The real server,
real workers and a real browser are in test_live.py.
"""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient

from autograder.service.command import open_service
from autograder.service.config import Policy, ServiceConfig
from autograder.service.web.app import build_app
from autograder.service.web.site import CSP
from tests.helpers import DEMO_COURSE, ROOT
from tests.service.live import sign_in

NOTEBOOK = (ROOT / "samples" / "alice.ipynb").read_bytes()


@pytest.fixture
def svc(tmp_path):
    cfg = ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE, queue_limit=3, upload_kb=64,
                        submissions_per_minute=100, requests_per_minute=1000)
    s = open_service(cfg, tmp_path / "data")
    for pid, role in [("alice", "student"), ("bob", "student"), ("ta", "staff")]:
        s.store.put_person(pid, pid.title(), f"{pid}@x.edu", role)
    return s


@pytest.fixture
def client(svc):
    with TestClient(build_app(svc, grade=False), base_url="http://testserver") as c:
        yield c


def bearer(svc, pid):
    return {"Authorization": f"Bearer {svc.store.issue_token(pid, 1)}"}


def upload(client, headers, data=NOTEBOOK, name="alice.ipynb", **fields):
    return client.post("/api/submissions", headers=headers, files={"file": (name, data)}, data=fields)


def test_submit_answers_202_with_an_unguessable_id_and_the_feedback_url(client, svc):
    r = upload(client, bearer(svc, "alice"))
    assert r.status_code == 202, r.text
    body = r.json()
    assert set(body) == {"id", "status", "url"} and body["status"] == "queued"
    assert len(body["id"]) >= 22 and body["url"].endswith(f"/submissions/{body['id']}")
    sub = svc.store.submission(body["id"])
    assert svc.blobs.get(sub.sha256) == NOTEBOOK  # stored before the answer, byte for byte
    got = client.get(f"/api/submissions/{body['id']}", headers=bearer(svc, "alice")).json()
    assert {k: got[k] for k in ("id", "status", "score", "max_score", "position")} == {
        "id": body["id"], "status": "queued", "score": None, "max_score": None, "position": 1}
    listed = client.get("/api/submissions", headers=bearer(svc, "alice")).json()["submissions"]
    assert [s["id"] for s in listed] == [body["id"]]


def test_another_persons_submission_is_404_exactly_like_a_missing_one(client, svc):
    sid = upload(client, bearer(svc, "alice")).json()["id"]
    bob = bearer(svc, "bob")
    theirs = [client.get(u, headers=bob) for u in (f"/api/submissions/{sid}", f"/submissions/{sid}",
                                                   f"/api/submissions/{sid}/events")]
    missing = [client.get(u, headers=bob) for u in ("/api/submissions/AAAAAAAAAAAAAAAAAAAAAA",
                                                    "/submissions/AAAAAAAAAAAAAAAAAAAAAA",
                                                    "/api/submissions/AAAAAAAAAAAAAAAAAAAAAA/events")]
    for a, b in zip(theirs, missing, strict=True):
        assert a.status_code == b.status_code == 404 and a.text == b.text
    assert client.get("/api/submissions", headers=bob).json()["submissions"] == []
    assert client.get(f"/api/submissions/{sid}", headers=bearer(svc, "ta")).status_code == 200  # staff may


def test_no_token_a_wrong_one_an_expired_one_and_a_revoked_one_are_refused(client, svc):
    assert client.get("/api/submissions").status_code == 401
    assert client.get("/api/submissions", headers={"Authorization": "Bearer nope"}).status_code == 401
    expired = {"Authorization": f"Bearer {svc.store.issue_token('alice', -1)}"}
    assert upload(client, expired).status_code == 401
    live = bearer(svc, "alice")
    assert client.get("/api/submissions", headers=live).status_code == 200
    svc.store.revoke("alice")
    r = upload(client, live)
    assert r.status_code == 401 and "revoked" in r.json()["error"]
    assert svc.store.submissions() == []  # refused means nothing was stored


def test_staff_routes_accept_only_staff(client, svc):
    alice, ta = bearer(svc, "alice"), bearer(svc, "ta")
    for url in ("/api/staff/gradebook.csv", "/api/staff/canvas.csv", "/api/staff/moodle.csv", "/staff",
                "/staff/students/alice", "/staff/report/demo"):
        assert client.get(url, headers=alice).status_code == 403, url
        assert client.get(url, headers=ta).status_code == 200, url
    assert client.post("/staff/regrade", headers=alice, data={"scope": "everyone"}).status_code == 403


def test_sign_in_exchanges_the_link_for_a_strict_httponly_cookie(client, svc):
    token = svc.store.issue_token("alice", 1)
    page = client.get(f"/signin?token={token}")
    assert page.status_code == 200 and "tg_session" not in page.headers.get("set-cookie", "")
    assert page.headers["referrer-policy"] == "no-referrer"
    r = sign_in(client, token)
    assert r.status_code == 303 and r.headers["location"] == "/"  # the link's token leaves the address bar
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http here; behind HTTPS (or a trusted proxy's X-Forwarded-Proto) it is
    home = client.get("/")
    assert "Your assignments" in home.text and "Alice" in home.text
    assert client.get("/signin?token=wrong").status_code == 401


def test_https_sets_the_secure_flag(svc):
    token = svc.store.issue_token("alice", 1)
    with TestClient(build_app(svc, grade=False), base_url="https://testserver") as c:
        assert "Secure" in sign_in(c, token).headers["set-cookie"]


def _signed_in(client, svc, pid="alice"):
    sign_in(client, svc.store.issue_token(pid, 1))
    page = client.get("/").text
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_state_changing_requests_need_the_csrf_token(client, svc):
    csrf = _signed_in(client, svc)
    files = {"file": ("a.ipynb", NOTEBOOK)}
    assert client.post("/submit", files=files, data={"assignment": "demo"}).status_code == 403
    assert client.post("/submit", files=files, data={"assignment": "demo", "csrf": "x" + csrf}).status_code == 403
    assert client.post("/api/submissions", files=files).status_code == 403  # the cookie alone is not enough
    assert svc.store.submissions() == []
    r = client.post("/submit", files=files, data={"assignment": "demo", "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/submissions/")
    assert client.post("/api/submissions", files=files, headers={"X-CSRF-Token": csrf}).status_code == 202
    assert client.post("/signout", data={}).status_code == 403


def test_uploads_are_checked_before_they_are_accepted(client, svc):
    h = bearer(svc, "alice")
    broken = upload(client, h, b'{"cells": [', "a.ipynb")
    assert broken.status_code == 400 and "not a readable notebook" in broken.json()["error"]
    assert upload(client, h, b'{"cells": 3, "nbformat": 4}', "a.ipynb").status_code == 400
    assert upload(client, h, b"\xff\xfe\x00", "a.py").status_code == 400
    assert upload(client, h, b"", "a.py").status_code == 400
    exe = upload(client, h, b"MZ", "a.exe")
    assert exe.status_code == 415 and ".ipynb" in exe.json()["error"]
    big = upload(client, h, b"x = 1\n" * 20000, "a.py")
    assert big.status_code == 413 and "64 KB" in big.json()["error"]
    assert client.post("/api/submissions", headers=h, data={"x": "y"}).status_code == 400
    assert svc.store.submissions() == []


def test_a_file_name_is_never_a_path(client, svc):
    r = upload(client, bearer(svc, "alice"), b"print(1)\n", "../../../../tmp/evil\x1b[2J.py")
    assert r.status_code == 202
    sub = svc.store.submission(r.json()["id"])
    assert sub.filename == "evil\\x1b[2J.py"  # shown only, escaped
    assert svc.blobs.path(sub.sha256).is_file() and not (svc.blobs.root / "evil.py").exists()


def test_a_full_queue_answers_503_with_retry_after_and_stores_nothing(client, svc):
    svc.cfg.student_queue_limit = 10  # the shared bound, not the per-student one
    h = bearer(svc, "alice")
    for _ in range(3):
        assert upload(client, h, b"print(1)\n", "a.py").status_code == 202
    r = upload(client, h, b"print(2)\n", "a.py")
    assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
    assert re.search(r"the grader is busy, try again in \d+ s", r.json()["error"])
    assert len(svc.store.submissions()) == 3
    svc.store.queue_regrade([s.id for s in svc.store.submissions()], "ta")  # staff regrades are never refused
    assert len(svc.store.queue()) == 6


def test_one_student_cannot_fill_the_queue_for_everyone_else(client, svc):
    svc.cfg.queue_limit = 4
    alice, bob = bearer(svc, "alice"), bearer(svc, "bob")
    codes = [upload(client, alice, f"print({i})\n".encode(), "a.py") for i in range(6)]
    assert [r.status_code for r in codes] == [202, 202, 429, 429, 429, 429]
    assert "you have 2 submission(s) waiting to be graded" in codes[-1].json()["error"]
    assert int(codes[-1].headers["retry-after"]) > 0 and len(svc.store.submissions("alice")) == 2
    mine = upload(client, bob, b"print(1)\n", "b.py")
    assert mine.status_code == 202  # the shared queue still has room for everyone else
    got = client.get(f"/api/submissions/{mine.json()['id']}", headers=bob).json()
    assert got["position"] == 2 and got["wait_s"] > 0  # before alice's second, with an estimated wait
    second = codes[1].json()["id"]
    assert client.get(f"/api/submissions/{second}", headers=alice).json()["position"] == 3
    page = client.get(f"/submissions/{mine.json()['id']}", headers=bob).text
    assert "place 2 in the queue, about" in page and "to wait" in page
    staff = client.get("/staff", headers=bearer(svc, "ta")).text
    assert 'id="queue"' in staff and 'id="workers"' in staff and "first before anyone" in staff


def test_rate_limits_per_student_and_per_address(svc):
    svc.cfg.student_queue_limit = 10  # the uploads per minute, not the submissions waiting
    svc.per_student.limit = 2
    svc.per_address.limit = 8
    with TestClient(build_app(svc, grade=False)) as c:
        h = bearer(svc, "alice")
        codes = [upload(c, h, b"print(1)\n", "a.py").status_code for _ in range(3)]
        assert codes == [202, 202, 429]
        rest = [c.get("/api/submissions", headers=h).status_code for _ in range(6)]
        assert rest[-1] == 429 and "Retry-After" in c.get("/", headers=h).headers


def test_healthz_is_503_until_the_workers_sandboxes_start(client):
    r = client.get("/healthz")
    assert r.status_code == 503 and "starting" in r.json()["detail"]


def test_every_page_carries_a_strict_content_security_policy(client, svc):
    _signed_in(client, svc)
    for url in ("/", "/healthz", "/nowhere"):
        r = client.get(url)
        assert r.headers["content-security-policy"] == CSP and r.headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self'" in CSP and "'unsafe-inline'" not in CSP.split("script-src")[1].split(";")[0]


@pytest.mark.parametrize("url", [
    "/static/../web.py", "/static/..%2fweb.py", "/static/%2e%2e/store.py", "/static/../../../solutions",
    "/submissions/..%2f..%2fservice.sqlite", "/api/submissions/..%2F..%2Fetc%2Fpasswd",
    "/api/submissions/../../staff/gradebook.csv", "/staff/students/..%2F..%2Fetc", "/staff/report/..%2fsolutions",
    "/staff/report/..", "/solutions/pytorch-fundamentals/views/test_hidden.py", "/data/service.sqlite",
    "/submissions/" + "A" * 500, "/api/submissions/%00",
])
def test_path_traversal_and_guessing_reach_nothing(client, svc, url):
    h = {**bearer(svc, "alice")}
    r = client.get(url, headers=h)
    assert r.status_code in (401, 403, 404), (url, r.status_code)
    assert "def test_" not in r.text and "SQLite format" not in r.text and "import " not in r.text


def test_the_event_stream_ends_when_the_submission_is_graded(client, svc):
    h = bearer(svc, "alice")
    sid = upload(client, h, b"print(1)\n", "a.py").json()["id"]
    job = svc.store.claim("demo", "w")
    svc.store.finish(job.id, {"submission": "s", "path": "p", "assignment": "demo", "exercises": []}, "v")
    with client.stream("GET", f"/api/submissions/{sid}/events", headers=h) as r:
        text = "".join(r.iter_text())
    assert r.headers["content-type"].startswith("text/event-stream")
    data = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert data[-1]["status"] == "graded"


def test_hidden_results_wait_for_the_deadline_and_public_ones_show_before(tmp_path):
    import datetime as dt

    deadline = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    cfg = ServiceConfig(assignments=[Policy("demo", deadline=deadline, hide_hidden_until_deadline=True)],
                        course=DEMO_COURSE)
    svc = open_service(cfg, tmp_path / "data")
    svc.store.put_person("alice", "Alice", "a@x.edu")
    svc.store.put_person("ta", "TA", "t@x.edu", "staff")
    with TestClient(build_app(svc, grade=False)) as c:
        h = bearer(svc, "alice")
        sid = upload(c, h, b"print(1)\n", "a.py").json()["id"]
        assert [j.suites for j in svc.store.jobs_of(sid)] == ["public", "hidden"]
        for points in (1, 5):  # the public job, then the hidden one
            job = svc.store.claim("demo", "w")
            svc.store.finish(job.id, {"submission": "s", "path": "p", "assignment": "demo", "exercises": [
                {"id": "basics", "title": "B", "max_points": 5, "tests": [
                    {"nodeid": "t", "name": "t", "exercise": "basics", "max_points": 5, "points": points,
                     "status": "failed", "message": f"{job.suites} message"}]}]}, "v")
        mine = c.get(f"/api/submissions/{sid}", headers=h).json()
        assert mine["suites"] == "public" and mine["score"] == 1
        page = c.get(f"/submissions/{sid}", headers=h).text
        assert "public message" in page and "hidden message" not in page and "after the deadline" in page
        staff = c.get(f"/api/submissions/{sid}", headers=bearer(svc, "ta")).json()
        assert staff["suites"] == "hidden" and staff["score"] == 5
        svc.store.set_extension("alice", "demo", deadline.timestamp() - 2 * 86400, "ta")  # her deadline has passed
        assert c.get(f"/api/submissions/{sid}", headers=h).json()["score"] == 5


@pytest.mark.parametrize("trusted", [False, True])
def test_forwarded_addresses_count_only_from_a_trusted_proxy(svc, trusted):
    """A real uvicorn on loopback: X-Forwarded-For picks the per-address bucket only when 127.0.0.1 is trusted."""
    import threading
    import time
    import urllib.error
    import urllib.request

    import uvicorn

    from autograder.service.command import uvicorn_config
    from tests.service.live import free_port

    svc.cfg.port, svc.cfg.trusted_proxies = free_port(), (["127.0.0.1"] if trusted else [])
    svc.per_address.limit = 3
    server = uvicorn.Server(uvicorn_config(svc.cfg, build_app(svc, grade=False)))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    try:
        while not server.started:
            time.sleep(0.05)
        codes = []
        for i in range(6):
            req = urllib.request.Request(f"http://127.0.0.1:{svc.cfg.port}/",
                                         headers={"X-Forwarded-For": f"10.0.0.{i}"})
            try:
                codes.append(urllib.request.urlopen(req, timeout=10).status)
            except urllib.error.HTTPError as e:
                codes.append(e.code)
        assert codes == ([200] * 6 if trusted else [200, 200, 200, 429, 429, 429])
        svc.per_address.limit = 100
        token = svc.store.issue_token("alice", 1)
        req = urllib.request.Request(f"http://127.0.0.1:{svc.cfg.port}/signin?token={token}",
                                     headers={"X-Forwarded-For": "10.0.1.1", "X-Forwarded-Proto": "https"})
        with urllib.request.urlopen(req, timeout=10) as r:  # the sign-in page's one-time cookie
            assert ("Secure" in r.headers["set-cookie"]) == trusted  # HTTPS as the trusted proxy says
    finally:
        server.should_exit = True
        t.join(10)


def test_staff_grant_extensions_revoke_and_issue_links_from_the_dashboard(client, svc):
    csrf = _signed_in(client, svc, "ta")
    assert "Staff dashboard" in client.get("/staff").text
    r = client.post("/staff/extension", data={"csrf": csrf, "person": "alice", "assignment": "demo",
                                              "deadline": "2030-01-02T03:04"})
    assert r.status_code == 200 and "alice has until 2030-01-02 03:04 UTC" in r.text
    assert svc.store.extension("alice", "demo") is not None
    alice = bearer(svc, "alice")
    assert client.get("/api/submissions", headers=alice).status_code == 200
    assert "revoked" in client.post("/staff/revoke", data={"csrf": csrf, "person": "alice"}).text
    assert client.get("/api/submissions", headers=alice).status_code == 401
    page = client.post("/staff/link", data={"csrf": csrf, "person": "alice"}).text
    token = re.search(r"signin\?token=([\w-]+)", page).group(1)
    assert svc.store.person_for_token(token).id == "alice"
    assert client.post("/staff/revoke", data={"person": "bob"}).status_code == 403  # no CSRF token: refused
    for action in ("revoke", "extension", "link"):  # an id nobody has is said, not done for nobody
        r = client.post(f"/staff/{action}", data={"csrf": csrf, "person": "nobody", "assignment": "demo",
                                                  "deadline": "2030-01-02T03:04"})
        assert r.status_code == 404 and "no such person" in r.text, (action, r.text)
    assert svc.store.person_for_token(svc.store.issue_token("bob", 1)) is not None


def test_the_class_report_links_each_student_and_flags_what_the_batch_flags(client, svc):
    from autograder.report.classreport import SCRIPT_CSP

    code = b"import torch\n\ndef double(x):\n    return x + x\n\ndef row_means(x):\n    return x.sum(1) / x.shape[1]\n"
    ids = {pid: upload(client, bearer(svc, pid), code, "mine.py").json()["id"] for pid in ("alice", "bob")}
    for _ in ids:
        job = svc.store.claim("demo", "w")
        svc.store.finish(job.id, {"submission": "s", "path": "p", "assignment": "demo", "status": "graded",
                                  "exercises": [{"id": "basics", "title": "Basics", "max_points": 4, "tests": [
                                      {"nodeid": "t", "name": "t", "exercise": "basics", "max_points": 4,
                                       "points": 4, "status": "passed", "message": ""}]}]}, "v")
    staff = bearer(svc, "ta")
    r = client.get("/staff/report/demo", headers=staff)
    assert r.status_code == 200
    csp = r.headers["content-security-policy"]
    scripts = csp.split("script-src")[1].split(";")[0]
    assert scripts == f" 'self' {SCRIPT_CSP}" and "'unsafe-inline'" not in scripts
    links = {who: href for href, who in re.findall(r'<td><a href="(/submissions/[^"]+)">(\w+)</a></td>', r.text)}
    assert links == {pid: f"/submissions/{sid}" for pid, sid in ids.items()}  # each to the attempt that counts
    assert r.text.count('class="flag duplicate"') == 2  # byte-identical files, as the batch flags them
    assert "<td>Alice</td>" in r.text  # the roster's names
    page = client.get(links["bob"], headers=staff)
    assert page.status_code == 200 and "Basics" in page.text


def test_the_dashboard_lists_the_first_jobs_of_a_long_queue_and_counts_the_rest(client, svc):
    """A burst's 300 queued jobs made every render of the dashboard slow (issue 45): it lists the first
    QUEUE_SHOWN in the order the workers take them, and says how many more wait."""
    from autograder.service.web.staff import QUEUE_SHOWN

    n = QUEUE_SHOWN + 7
    for i in range(n):
        svc.store.put_person(f"s{i:03d}", f"S {i}", f"s{i}@x.edu", "student")
        svc.store.add_submission(f"s{i:03d}", "demo", "0" * 64, "py", "x.py", 10, 0, ["hidden"])
    _signed_in(client, svc, "ta")
    page = client.get("/staff").text
    assert f"Queue ({n})" in page
    table = page.split('id="queue"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == QUEUE_SHOWN + 1  # the header row and the first QUEUE_SHOWN
    assert f"s{QUEUE_SHOWN - 1:03d}" in table and f"s{QUEUE_SHOWN:03d}" not in table
    assert f"The first {QUEUE_SHOWN} are listed; 7 more wait behind them." in page


def test_the_dashboard_lists_the_first_students_and_people_and_all_of_them_on_request(client, svc):
    """At a class of 300 the dashboard rendered every student's standing twice over on each request, slower
    than a TA waits while the graders saturate the cores (issue 45): it lists the first DASHBOARD_ROWS, staff
    first among the people, says how many there are, and ?all=1 lists every one."""
    from autograder.service.web.staff import DASHBOARD_ROWS

    n = DASHBOARD_ROWS + 5
    for i in range(n):
        svc.store.put_person(f"s{i:03d}", f"S {i}", f"s{i}@x.edu", "student")
    _signed_in(client, svc, "ta")
    total = n + 2  # alice and bob
    page = client.get("/staff").text
    assert f"The first {DASHBOARD_ROWS} of {total} students are listed" in page
    assert f"The first {DASHBOARD_ROWS} of {total + 1} people are listed" in page
    people = page.split("<h2>People</h2>", 1)[1]
    assert '<a href="/staff/students/ta">ta</a>' in people  # staff are always listed
    everything = client.get("/staff?all=1").text
    assert "students-more" not in everything and "people-more" not in everything
    assert everything.count('<a href="/staff/students/s104">') == 2  # in the students and the people tables
