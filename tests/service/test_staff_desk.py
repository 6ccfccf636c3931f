"""The staff's daily tool through the real app (Starlette's TestClient, no workers; results stored as a worker
stores them): find a submission, act on its row without typing an id, see its history, and the audit log."""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient

from autograder.service.command import open_service
from autograder.service.config import Policy, ServiceConfig
from autograder.service.ledger import Filters
from autograder.service.web.app import build_app
from tests.helpers import DEMO_COURSE, ROOT
from tests.service.live import sign_in

NOTEBOOK = (ROOT / "samples" / "alice.ipynb").read_bytes()


def result(points: float, status: str = "graded") -> dict:
    return {"submission": "s", "path": "x", "assignment": "demo", "status": status,
            "exercises": [{"id": "e", "title": "E", "max_points": 10,
                           "tests": [{"nodeid": "t", "name": "t", "exercise": "e", "max_points": 10,
                                      "points": points, "status": "passed" if points == 10 else "failed",
                                      "message": "" if points == 10 else "expected 3, got 2"}]}]}


@pytest.fixture
def svc(tmp_path):
    cfg = ServiceConfig(assignments=[Policy("demo", timezone="Europe/Berlin")], course=DEMO_COURSE,
                        requests_per_minute=10_000, submissions_per_minute=1000)
    s = open_service(cfg, tmp_path / "data")
    s.store.put_person("ta", "Tess", "t@x.edu", "staff")
    return s


def submit(svc, pid, data=NOTEBOOK, late=0, name="work.ipynb"):
    if svc.store.person(pid) is None:
        svc.store.put_person(pid, f"Student {pid}", f"{pid}@x.edu")
    digest = svc.blobs.put(data)
    return svc.store.add_submission(pid, "demo", digest, "ipynb", name, len(data), late, ["hidden"])


def grade(svc, points, status="graded", version="v1", needs_ta=False):
    job = svc.store.claim("demo", "w")
    assert svc.store.finish(job.id, result(points, status), version, needs_ta=needs_ta)
    return job.submission


def signed_in(svc, pid):
    c = TestClient(build_app(svc, grade=False))
    sign_in(c, svc.store.issue_token(pid, 1))
    return c


def csrf(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_the_list_finds_filters_sorts_and_pages_on_the_server(svc):
    for i in range(60):
        submit(svc, f"s{i:02d}", late=1 if i % 10 == 0 else 0)
        grade(svc, i % 11, needs_ta=(i == 7))
    led = svc.ledger
    total, rows = led.find(Filters())
    assert total == 60 and len(rows) == 50 and led.find(Filters(page=2))[1][-1].person == "s00"  # newest first
    assert led.find(Filters(q="s1"))[0] == 10 and led.find(Filters(q="%"))[0] == 0  # LIKE's wildcards are text
    assert led.find(Filters(late=True))[0] == 6 and led.find(Filters(flagged=True))[1][0].person == "s07"
    assert led.find(Filters(min_score=9, max_score=10))[0] == 10
    got = [r.score for r in led.find(Filters(sort="score", descending=False))[1][:3]]
    assert got == [0, 0, 0]
    assert led.find(Filters(status="queued"))[0] == 0 and led.find(Filters(status="graded"))[0] == 60
    ta = signed_in(svc, "ta")
    page = ta.get("/staff/submissions?min=9&max=10&sort=student&order=asc").text
    assert "10 submission(s)." in page
    assert re.findall(r'<a href="/staff/students/(s\d+)">', page)[:3] == ["s09", "s10", "s20"]
    page = ta.get("/staff/submissions?page=2").text
    assert "60 submission(s), page 2 of 2." in page and 'rel="prev"' in page and 'rel="next"' not in page
    assert "Status" in ta.get("/staff/submissions?min=x&sort=evil;DROP&page=-3").text  # nonsense is ignored
    assert signed_in(svc, "s01").get("/staff/submissions").status_code == 403


def test_row_actions_regrade_review_and_download_with_no_typed_id_and_a_visible_history(svc):
    sid = submit(svc, "alice")
    grade(svc, 4)
    ta = signed_in(svc, "ta")
    page = ta.get("/staff/submissions").text
    token = csrf(page)
    row = re.search(rf'<tr data-id="{sid}">.*?</tr>', page, re.S).group(0)
    for action in ("Open", "Download", "Extend", "Regrade", "Mark reviewed"):
        assert f">{action}<" in row, action
    # no form anywhere on the staff pages asks for an id in a text field
    for url in ("/staff", "/staff/submissions", "/staff/students/alice", f"/submissions/{sid}"):
        for field in re.findall(r"<input[^>]*>", ta.get(url).text):
            if re.search(r'name="(person|target|submission)"', field):
                assert 'type="hidden"' in field, (url, field)
    back = re.search(r'name="back" value="([^"]+)"', row).group(1).replace("&amp;", "&")
    r = ta.post("/staff/regrade", data={"csrf": token, "scope": "submission", "target": sid, "back": back,
                                        "reason": "test t was wrong"})
    assert "1 submission(s) queued for regrading" in r.text and f'href="{back.replace("&", "&amp;")}"' in r.text
    grade(svc, 9, version="v2")
    mine = signed_in(svc, "alice").get(f"/submissions/{sid}").text
    assert "This submission was graded 2 times" in mine and "regraded by ta" in mine
    hist = re.search(r'<table id="history-table">.*?</table>', mine, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", hist)
    assert cells[1] == "submitted" and cells[2] == "4 / 10"
    assert cells[5] == "regraded by ta: test t was wrong; the tests changed since the result before"
    assert cells[6:8] == ["9 / 10", "4 / 10"]
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d CE[S]?T", cells[0])  # the assignment's time zone, named
    # mark reviewed, then find it by that
    ta.post("/staff/reviewed", data={"csrf": token, "submission": sid, "value": "1"})
    assert svc.ledger.find(Filters(reviewed=True))[0] == 1
    assert "reviewed by ta" in ta.get("/staff/submissions?reviewed=yes").text
    f = ta.get(f"/staff/submissions/{sid}/file")
    assert f.content == NOTEBOOK and re.fullmatch(r'attachment; filename="alice-demo-[\w-]{8}\.ipynb"',
                                                  f.headers["content-disposition"])
    assert signed_in(svc, "alice").get(f"/staff/submissions/{sid}/file").status_code == 403
    log = [(a.action, a.by, a.reason, a.after) for a in svc.ledger.audit(submission=sid)]
    assert log == [("review", "ta", "", "reviewed"), ("regrade", "ta", "test t was wrong", "")]
    student_page = ta.get("/staff/students/alice").text
    assert "test t was wrong" in student_page and "Audit log" in student_page


def test_back_goes_only_to_a_page_of_this_site(svc):
    sid = submit(svc, "alice")
    ta = signed_in(svc, "ta")
    token = csrf(ta.get("/staff").text)
    for evil in ("https://evil.example/", "//evil.example/staff", "/staff\"><script>", "javascript:alert(1)"):
        r = ta.post("/staff/reviewed", data={"csrf": token, "submission": sid, "back": evil})
        assert '<a href="/staff">Back</a>' in r.text, evil


def test_an_extension_from_the_students_page_names_the_time_zone_and_is_audited(svc):
    submit(svc, "alice")
    ta = signed_in(svc, "ta")
    page = ta.get("/staff/students/alice").text
    assert "time zone Europe/Berlin" in page and 'id="extend"' in page
    r = ta.post("/staff/extension", data={"csrf": csrf(page), "person": "alice", "assignment": "demo",
                                          "deadline": "2030-01-15T23:59", "reason": "ill"})
    assert "alice has until 2030-01-15 23:59 CET for demo" in r.text
    a = svc.ledger.audit(person="alice")[0]
    assert (a.action, a.before, a.after, a.reason) == ("extension", "the course deadline", "2030-01-15 23:59 CET",
                                                       "ill")


def test_the_class_report_finds_similar_code_and_the_list_filters_by_it(svc):
    nb = json.loads(NOTEBOOK)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            cell["source"] = src.replace("    ", "    # a comment of mine\n    ", 1)
    other = json.dumps(nb).encode()
    a, b = submit(svc, "alice"), submit(svc, "bob", data=other)
    grade(svc, 5), grade(svc, 6)
    c = submit(svc, "carol", data=(ROOT / "samples" / "dave.py").read_bytes(), name="dave.py")
    svc.store.db.execute("UPDATE submissions SET kind = 'py' WHERE id = ?", (c,))
    grade(svc, 1)
    ta = signed_in(svc, "ta")
    report = ta.get("/staff/report/demo").text
    assert "Similar code (1)" in report
    page = ta.get("/staff/submissions?similar=yes").text
    assert "2 submission(s)." in page and a in page and b in page and c not in page


def test_an_adjustment_needs_a_reason_is_audited_exported_and_shown_to_the_student(svc):
    sid = submit(svc, "alice")
    grade(svc, 4)
    ta = signed_in(svc, "ta")
    page = ta.get(f"/submissions/{sid}").text
    token = csrf(page)
    assert 'id="adjust"' in page and '<option value="e">E (4 / 10)</option>' in page

    def adjust(**form):
        return ta.post("/staff/adjust", data={"csrf": token, "submission": sid, "exercise": "e", **form})
    assert "say why" in adjust(kind="add", points="2", reason=" ").text  # a reason is required
    assert "as a number" in adjust(kind="add", points="nan", reason="x").text
    assert "choose one of the submission" in adjust(exercise="zz", kind="add", points="1", reason="x").text
    said = adjust(kind="add", points="2", reason="partial credit for the shape").text
    assert "the total was 4 / 10, now 6 / 10" in said
    assert "the total was 6 / 10, now 5.5 / 10" in adjust(kind="deduct", points="0.5", reason="copied a helper").text
    said = adjust(kind="set", points="12", reason="the test was wrong").text
    assert "the total was 5.5 / 10, now 10 / 10" in said  # kept within the exercise's maximum
    log = [(a.action, a.by, a.before, a.after, a.reason) for a in svc.ledger.audit(submission=sid)]
    assert log[0] == ("adjust e", "ta", "5.5 / 10", "10 / 10", "the test was wrong") and len(log) == 3
    # the export carries the adjusted score and the reasons
    book = ta.get("/api/staff/gradebook.csv").text.splitlines()
    header, row = book[0].split(","), next(line for line in book if line.startswith(sid))
    assert header[-4:-2] == ["adjustment", "adjustment_reason"] and "e: partial credit for the shape" in row
    assert row.split(",")[header.index("total")] == "10" and row.split(",")[header.index("raw_total")] == "4"
    assert '"Student A","alice",' not in ta.get("/api/staff/canvas.csv").text
    assert ",alice,,alice@x.edu,,10" in ta.get("/api/staff/canvas.csv").text
    # the student sees the changes and their reasons, and the new score
    mine = signed_in(svc, "alice").get(f"/submissions/{sid}").text
    section = re.search(r'<section id="adjustments".*?</section>', mine, re.S).group(0)
    assert "<b>10 / 10</b>" in section and "the grader's: 4 / 10" in section
    assert "+2" in section and "-0.5" in section and "set to 10" not in section and "set to 12" in section
    assert "copied a helper" in section and 'id="adjust"' not in mine
    api = signed_in(svc, "alice").get(f"/api/submissions/{sid}").json()
    assert api["score"] == 10
