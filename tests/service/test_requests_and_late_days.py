"""Regrade requests (a student asks, staff answer from the dashboard's queue) and the course's bank of late days:
the policy, and both workflows through the real app as a student and as a TA, asserting what the pages show."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import time

import pytest

from autograder.service import policy
from autograder.service.command import open_service
from autograder.service.config import Policy, ServiceConfig, parse_config
from autograder.service.ledger import Ledger
from autograder.service.store import ServiceStore
from tests.helpers import DEMO_COURSE
from tests.service.test_staff_desk import csrf, result, signed_in, submit


def _graded(store: ServiceStore, pid: str, aid: str, late: int, points: float) -> str:
    if store.person(pid) is None:
        store.put_person(pid, pid)
    sid = store.add_submission(pid, aid, "0" * 64, "ipynb", "w.ipynb", 1, late, ["hidden"])
    job = store.claim(aid, "w")
    assert job is not None and job.submission == sid
    assert store.finish(job.id, result(points), "v1")
    return sid


def test_the_bank_is_spent_on_counting_attempts_in_deadline_order_then_the_penalty(tmp_path):
    store = ServiceStore(tmp_path / "s.sqlite")
    zone = dt.UTC
    late_first = Policy("b", deadline=dt.datetime(2030, 1, 1, tzinfo=zone), late="penalty")
    early = Policy("a", deadline=dt.datetime(2029, 1, 1, tzinfo=zone), late="penalty")
    _graded(store, "p", "a", 2, 8)  # counts (8 > 5): spends 2
    _graded(store, "p", "a", 0, 5)
    _graded(store, "p", "b", 3, 10)  # 1 day left: 2 days' penalty (20%)
    cfg = ServiceConfig(assignments=[late_first, early], late_days=3)
    by_aid, bank = policy.course_standings(cfg, store, "p")
    assert list(by_aid) == ["b", "a"] and bank.used == {"a": 2, "b": 1} and bank.left == 0
    a_counting = next(st for st in by_aid["a"] if st.counts)
    assert (a_counting.score, a_counting.penalty_percent, a_counting.late_days_used) == (8, 0, 2)
    b = by_aid["b"][0]
    assert (b.score, b.penalty_percent, b.late_days_used) == (8, 20, 1)
    assert [st.late_days_used for st in by_aid["a"] if not st.counts] == [0]  # only the counting one spends
    # no bank: the penalty as before; a refusing assignment spends nothing
    by_aid, bank = policy.course_standings(ServiceConfig(assignments=[late_first, early]), store, "p")
    assert bank.left == 0 and bank.used == {"a": 0, "b": 0} and by_aid["b"][0].score == 7
    refusing = Policy("b", late="refuse")
    _, bank = policy.course_standings(ServiceConfig(assignments=[refusing], late_days=3), store, "p")
    assert bank.used == {"b": 0} and bank.left == 3


def test_the_config_keys_and_an_older_data_folder(tmp_path):
    cfg = parse_config({"course": {"late_days": 2}, "assignments": [
        {"id": "x", "timezone": "Europe/Berlin", "regrade_requests_until": "2027-01-10T23:59:00"}]})
    assert cfg.late_days == 2 and str(cfg.assignments[0].regrade_requests_until) == "2027-01-10 23:59:00+01:00"
    with pytest.raises(Exception, match="late_days must be 0"):
        parse_config({"course": {"late_days": -1}})
    store = ServiceStore(tmp_path / "s.sqlite")
    Ledger(store)
    store.db.execute("DROP TABLE regrade_requests")  # a data folder from before requests existed
    assert Ledger(store).requests() == []


@pytest.fixture
def svc(tmp_path):
    cfg = ServiceConfig(assignments=[Policy("demo", timezone="Europe/Berlin", late="penalty",
                                            regrade_requests_until=dt.datetime.now(dt.UTC) + dt.timedelta(days=1))],
                        course=DEMO_COURSE, requests_per_minute=10_000, submissions_per_minute=1000, late_days=2)
    s = open_service(cfg, tmp_path / "data")
    s.store.put_person("ta", "Tess", "t@x.edu", "staff")
    return s


def test_a_student_asks_a_ta_answers_from_the_queue_and_the_bank_shows_everywhere(svc):
    sid = submit(svc, "alice", late=3)
    job = svc.store.claim("demo", "w")
    svc.store.finish(job.id, result(4), "v1")
    alice = signed_in(svc, "alice")
    home = alice.get("/").text
    assert "Late days: <b>0 of 2 left</b>" in home and "3 day(s), 2 from your bank, -10%" in home
    page = alice.get(f"/submissions/{sid}").text
    assert 'id="request-regrade"' in page and '<option value="e0.t0">E: t</option>' in page
    token = csrf(page)

    def ask(**form):
        return alice.post(f"/submissions/{sid}/regrade-request", data={"csrf": token, **form})
    assert "say what you think" in ask(target="e0.t0", comment="  ").text
    assert "choose the exercise" in ask(target="e9", comment="x").text
    assert ask(target="e0.t0", comment="<b>2 is right</b>").status_code == 200
    assert "already asked" in ask(target="e0.t0", comment="again").text
    ask(target="e0", comment="the whole exercise")
    # the TA's queue: both open, the comment escaped, no typed id
    ta = signed_in(svc, "ta")
    dash = ta.get("/staff").text
    assert "Regrade requests (2 open)" in dash and "&lt;b&gt;2 is right&lt;/b&gt;" in dash and "<b>2 is" not in dash
    assert re.search(r"<td class=\"num\">3 \(2 from the bank\)</td><td class=\"num\">0</td>", dash)
    first, second = [q.id for q in svc.ledger.requests(state="open")]
    token_ta = csrf(dash)

    def answer(rid, **form):
        return ta.post("/staff/answer", data={"csrf": token_ta, "request": str(rid), **form}).text
    assert "write a reply" in answer(first, decision="declined", reply="")
    assert "as a number" in answer(first, decision="accepted", kind="add", points="", reply="yes")
    assert len(svc.ledger.requests(state="open")) == 2  # a refused answer leaves the request open, unadjusted
    said = answer(first, decision="accepted", kind="add", points="3", reply="you are right, 2 is accepted")
    assert "accepted; e adjusted, the total was 4 / 10, now 7 / 10" in said
    assert "already answered" in answer(first, decision="declined", reply="no")
    assert "declined" in answer(second, decision="declined", reply="the rest is wrong")
    assert "Regrade requests (0 open)" in ta.get("/staff").text
    # the student reads both answers, and the adjusted, penalised score
    mine = alice.get(f"/submissions/{sid}").text
    section = re.search(r'<section id="requests".*?</section>', mine, re.S).group(0)
    assert "<b>Accepted</b> by ta" in section and "you are right, 2 is accepted" in section
    assert "<b>Declined</b> by ta" in section and "the rest is wrong" in section
    assert re.search(r"7 / 10</td>\s*<td>3 day\(s\), 2 from your bank, -10%</td>", alice.get("/").text)
    log = [(a.action, a.by) for a in reversed(svc.ledger.audit(submission=sid))]
    assert log == [("regrade request", "alice"), ("regrade request", "alice"), ("adjust e", "ta"),
                   ("regrade request accepted", "ta"), ("regrade request declined", "ta")]
    got = next(r for r in csv.DictReader(io.StringIO(ta.get("/api/staff/gradebook.csv").text))
               if r["submission"] == sid)
    assert (got["late_days_used"], got["late_days_left"], got["penalty_percent"], got["total"]) == \
        ("2", "0", "10", "6.3")
    assert "0 of 2 left" in ta.get("/staff/students/alice").text
    # past the date staff set: no form, and a request is refused
    svc.cfg.assignments[0].regrade_requests_until = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=time.time() % 7 + 1)
    assert 'id="request-regrade"' not in alice.get(f"/submissions/{sid}").text
    assert "closed on" in ask(target="e0", comment="late").text
