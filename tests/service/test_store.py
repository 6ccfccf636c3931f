"""The service's store, rules and exports, without a server: each fact the pages and the API rely on."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder.service import exports, policy
from autograder.service.blobs import Blobs
from autograder.service.config import ConfigError, Policy, ServiceConfig, parse_config
from autograder.service.roster import read_roster
from autograder.service.store import ServiceStore, token_hash

RESULT = {"submission": "submission", "path": "x", "assignment": "a", "status": "graded",
          "exercises": [{"id": "e", "title": "E", "max_points": 10,
                         "tests": [{"nodeid": "t", "name": "t", "exercise": "e", "max_points": 10, "points": 7,
                                    "status": "failed", "message": "m"}]}]}


@pytest.fixture
def store(tmp_path):
    s = ServiceStore(tmp_path / "s.sqlite")
    s.put_person("alice", "Alice A", "alice@example.edu")
    s.put_person("bob", "Bob B", "bob@example.edu")
    s.put_person("ta", "The TA", "ta@example.edu", "staff")
    return s


def _submit(store, person="alice", assignment="a", **kw):
    return store.add_submission(person, assignment, "0" * 64, "py", "x.py", 10, kw.get("late", 0), ["hidden"])


def test_tokens_are_stored_hashed_and_can_be_revoked(store, tmp_path):
    token = store.issue_token("alice", days=1)
    raw = (tmp_path / "s.sqlite").read_bytes()
    assert token.encode() not in raw and store.db.execute("SELECT hash FROM tokens").fetchone()[0] == token_hash(token)
    assert store.person_for_token(token).id == "alice"
    sid, csrf = store.open_session(token, hours=1)
    assert store.session(sid)[0].id == "alice" and store.session(sid)[1] == csrf
    assert store.revoke("alice") == 1
    assert store.person_for_token(token) is None and store.session(sid) is None


def test_an_expired_token_signs_nobody_in(store):
    token = store.issue_token("bob", days=-1)
    assert store.person_for_token(token) is None and store.open_session(token, 1) is None


def test_a_job_is_graded_into_exactly_one_result(store):
    sid = _submit(store)
    job = store.claim("a", "w0")
    assert job.submission == sid and store.claim("a", "w1") is None  # two workers never share a job
    assert store.finish(job.id, RESULT, "v1")
    assert not store.finish(job.id, RESULT, "v1")  # a second delivery is refused, not stored twice
    assert store.gradings() == {job.id: 1}
    assert store.results_of(sid)[0].total == 7


def test_a_job_cut_off_by_a_stop_goes_back_to_the_queue_without_a_try(store):
    _submit(store)
    job = store.claim("a", "w0")
    assert store.requeue_interrupted() == 1
    again = store.claim("a", "w0")
    assert again.id == job.id and again.tries == 0


def test_a_job_whose_worker_dies_twice_is_finished_for_a_ta(store):
    _submit(store)
    job = store.claim("a", "w0")
    assert store.worker_died(job.id, "died once")  # queued again
    job = store.claim("a", "w0")
    assert job.tries == 1
    assert not store.worker_died(job.id, "died twice")  # the caller stores a grader failure
    assert store.job(job.id).state == "running"
    store.finish(job.id, {**RESULT, "status": "internal_error"}, "v", needs_ta=True, error="died twice")
    assert store.needs_ta() == [(job.submission, "alice", "a")]
    store.queue_regrade([job.submission], "ta")  # fixed: regraded, no longer waiting for a TA
    store.finish(store.claim("a", "w").id, RESULT, "v")
    assert store.needs_ta() == []


def test_a_regrade_is_a_new_result_and_the_old_one_is_kept(store):
    sid = _submit(store)
    store.finish(store.claim("a", "w").id, RESULT, "v1")
    assert store.queue_regrade([sid], "ta") == 1
    better = {**RESULT, "exercises": [{**RESULT["exercises"][0], "tests": [{**RESULT["exercises"][0]["tests"][0],
                                                                             "points": 10, "status": "passed"}]}]}
    store.finish(store.claim("a", "w").id, better, "v2")
    assert [r.total for r in store.results_of(sid)] == [7, 10]
    assert store.latest_results("a")[sid].total == 10


def test_a_result_is_parsed_once_and_a_regrade_is_read_at_once(store):
    """The dashboard and exports read each counting attempt on every request: a stored result never changes,
    so it is parsed once (issue 45: a render parsed the class's JSON); a regrade is a new row, read at once."""
    sid = _submit(store)
    store.finish(store.claim("a", "w").id, RESULT, "v1")
    first = store.latest_results("a")[sid]
    assert store.submission_result(first.id) is store.submission_result(first.id)  # the same object, parsed once
    assert store.result_dict(first.id) is first.result
    rows = exports.counting_rows(ServiceConfig(assignments=[Policy("a")]), store, {"a": "A"})
    assert [r.score for r in rows if r.person.id == "alice"] == [7]
    store.queue_regrade([sid], "ta")
    better = {**RESULT, "exercises": [{**RESULT["exercises"][0], "tests": [{**RESULT["exercises"][0]["tests"][0],
                                                                             "points": 10, "status": "passed"}]}]}
    store.finish(store.claim("a", "w").id, better, "v2")
    rows = exports.counting_rows(ServiceConfig(assignments=[Policy("a")]), store, {"a": "A"})
    assert [r.score for r in rows if r.person.id == "alice"] == [10]


def test_two_identical_uploads_are_two_attempts_sharing_one_file(store, tmp_path):
    blobs = Blobs(tmp_path / "blobs")
    d1, d2 = blobs.put(b"print(1)\n"), blobs.put(b"print(1)\n")
    assert d1 == d2 and blobs.get(d1) == b"print(1)\n"
    a, b = _submit(store), _submit(store)
    assert a != b and len(store.submissions("alice")) == 2
    with pytest.raises(ValueError):
        blobs.path("../../etc/passwd")


def test_position_counts_the_jobs_ahead(store):
    _submit(store, "alice")
    _submit(store, "bob")
    jobs = store.queue("a")
    assert [store.position(j) for j in jobs] == [1, 2]
    store.claim("a", "w")
    assert [store.position(j) for j in store.queue("a")] == [0, 1]


def test_attempt_limit_cooldown_and_grader_errors(store):
    p = Policy("a", max_attempts=2, cooldown_minutes=10)
    assert policy.refusal(p, "alice", store) is None
    sid = _submit(store)
    r = policy.refusal(p, "alice", store)
    assert r.status == 429 and 0 < r.retry_after <= 600 and "cooldown" in r.message
    assert policy.refusal(p, "alice", store, now=time.time() + 601) is None
    store.finish(store.claim("a", "w").id, {**RESULT, "status": "internal_error"}, "v")
    assert policy.counted(store, store.submissions("alice")) == []  # a grader error does not count
    _submit(store)
    _submit(store)
    assert "all 2 attempts" in policy.refusal(p, "alice", store, now=time.time() + 601).message
    assert sid


def test_deadline_time_zone_late_penalty_and_extension(store):
    zone = ZoneInfo("Europe/Berlin")
    deadline = dt.datetime(2026, 1, 10, 23, 59, tzinfo=zone)
    refuse = Policy("a", deadline=deadline, timezone="Europe/Berlin", late="refuse")
    after = deadline.timestamp() + 3600
    assert "deadline" in policy.refusal(refuse, "alice", store, now=after).message
    store.set_extension("alice", "a", deadline.timestamp() + 86400 * 2, "ta")
    assert policy.refusal(refuse, "alice", store, now=after) is None  # her extension
    assert policy.refusal(refuse, "bob", store, now=after) is not None
    assert policy.late_days(deadline, after) == 1 and policy.late_days(deadline, deadline.timestamp() - 1) == 0
    penalty = Policy("a", deadline=deadline, late="penalty", late_penalty_per_day=10)
    assert policy.penalty_percent(penalty, 3) == 30 and policy.penalty_percent(penalty, 20) == 100
    assert any("Europe/Berlin" in line for line in policy.rules(penalty, deadline))


def test_best_or_last_attempt_counts(store):
    def graded(points, late=0):
        sid = store.add_submission("alice", "a", "0" * 64, "py", "x.py", 1, late, ["hidden"])
        res = {**RESULT, "exercises": [{**RESULT["exercises"][0], "tests": [
            {**RESULT["exercises"][0]["tests"][0], "points": points}]}]}
        store.finish(store.claim("a", "w").id, res, "v")
        return sid

    first, second = graded(9), graded(5)
    best = [s for s in policy.standings(Policy("a", counts="best"), store, "alice") if s.counts]
    last = [s for s in policy.standings(Policy("a", counts="last"), store, "alice") if s.counts]
    assert [s.submission.id for s in best] == [first] and [s.submission.id for s in last] == [second]
    late = graded(10, late=1)  # 10 points, 50% off: 5 < 9
    pen = Policy("a", counts="best", late="penalty", late_penalty_per_day=50)
    assert [s.submission.id for s in policy.standings(pen, store, "alice") if s.counts] == [first]
    assert late


def test_config_rejects_unknown_keys_and_reads_deadlines():
    cfg = parse_config({"grading": {"workers": 2},
                        "assignments": [{"id": "x", "deadline": dt.datetime(2026, 5, 1, 12, 0),
                                         "timezone": "America/New_York", "counts": "last", "canvas_id": 4711}]})
    assert cfg.workers == 2 and cfg.assignments[0].deadline.tzinfo == ZoneInfo("America/New_York")
    assert cfg.assignments[0].canvas_id == 4711
    for bad, word in [({"grading": {"wrokers": 2}}, "wrokers"), ({"assignments": [{"id": "x", "count": "best"}]},
                      "count"), ({"assignments": [{"id": "x", "timezone": "Mars/Base"}]}, "Mars/Base"),
                      ({"assignments": [{"id": "x", "late": "maybe"}]}, "late")]:
        with pytest.raises(ConfigError, match=word):
            parse_config(bad)
    assert ServiceConfig().assignments[0].id == "pytorch-fundamentals"


def test_rosters_from_our_csv_canvas_and_moodle(tmp_path):
    ours = tmp_path / "ours.csv"
    ours.write_text("id,name,email,role\ns1,Ann,ann@x.edu,student\nt1,Tim,tim@x.edu,staff\n")
    assert read_roster(ours) == [("s1", "Ann", "ann@x.edu", "student"), ("t1", "Tim", "tim@x.edu", "staff")]
    canvas = tmp_path / "canvas.csv"
    canvas.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
                      "\"Smith, Ann\",4711,S1,ann@x.edu,Sec 1\n".replace("    ", ""))
    assert read_roster(canvas) == [("4711", "Smith, Ann", "ann@x.edu", "student")]
    moodle = tmp_path / "moodle.csv"
    moodle.write_text("First name,Last name,ID number,Email address\nAnn,Smith,A-1,ann@x.edu\n")
    assert read_roster(moodle) == [("A-1", "Ann Smith", "ann@x.edu", "student")]


def test_exports_have_each_lms_columns_and_no_formulas(store):
    store.put_person("=HYPERLINK(\"x\")", "=cmd|' /C calc'!A0", "evil@x.edu")
    sid = _submit(store)
    store.finish(store.claim("a", "w").id, RESULT, "v")
    cfg = ServiceConfig(assignments=[Policy("a")])
    rows = exports.counting_rows(cfg, store, {"a": "Assignment A"})
    canvas = list(csv.reader(io.StringIO(exports.canvas_csv(rows, {"a": "Assignment A"}, {"a": 10}))))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Assignment A"]
    assert canvas[1][0] == "Points Possible" and canvas[1][-1] == "10"
    assert ["Alice A", "alice", "", "alice@example.edu", "", "7"] in canvas
    assert all(not c.startswith("=") for row in canvas for c in row)
    moodle = list(csv.reader(io.StringIO(exports.moodle_csv(rows, {"a": "Assignment A"}))))
    assert moodle[0] == ["Email address", "ID number", "Full name", "Assignment A"]
    book = list(csv.DictReader(io.StringIO(exports.gradebook_csv(rows, {"a": ["e"]}))))
    alice = next(r for r in book if r["student"] == "alice")
    assert alice["submission"] == sid and alice["e"] == "7" and alice["total"] == "7"


def canvas_reads(text: str) -> dict:
    r"""What Canvas's gradebook importer takes from a CSV: a port of its header and row rules.

    From Canvas LMS's own code (Instructure, AGPL; read from a public copy of canvas-lms):
    ``app/models/gradebook_importer.rb`` (``row_has_student_headers?``: the first column contains
    "Student" and the second "ID"; ``update_column_count``: "SIS User ID" then "SIS Login ID" make five
    student columns, the last of which must contain "Section" (``header?``); ``strip_non_assignment_columns``;
    ``check_for_non_student_row``: a row whose first cell contains "Points Possible" gives the maxima;
    ``process_student``: the user by ``ID``, else by SIS User ID, SIS Login ID, then name) and
    ``app/models/assignment.rb`` (``Assignment.title_and_id``: ``/\A(.*)\s\((\d+)\)\z/``, a column
    ``Title (NUMBER)`` is assignment NUMBER; any other name is matched as a title or becomes a new one).
    """
    import re

    rows = list(csv.reader(io.StringIO(text)))
    head = rows[0]
    assert len(head) > 3 and "Student" in head[0] and "ID" in head[1], "Canvas: Invalid header row"
    cols, login = 3, None
    if re.search(r"SIS\s+Login\s+ID", head[2]):
        cols, login = 4, 2
    elif re.search(r"SIS\s+User\s+ID", head[2]) and re.search(r"SIS\s+Login\s+ID", head[3]):
        cols, login = 5, 3
    assert "Section" in head[cols - 1], "Canvas: Invalid header row"
    skip = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                      "Override Score|Override Grade|Override Status")
    assignments = []
    for name in head[cols:]:
        if skip.search(name):
            continue
        m = re.fullmatch(r"(.*)\s\((\d+)\)", name)
        assignments.append({"column": head.index(name), "title": m[1] if m else name,
                            "id": int(m[2]) if m else None})
    points, students = {}, []
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            points = {a["title"]: row[a["column"]] for a in assignments}
        elif not all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            students.append({"name": row[0], "id": row[1], "login": row[login] if login is not None else None,
                             "grades": {a["title"]: row[a["column"]] for a in assignments}})
    return {"assignments": assignments, "points": points, "students": students}


def test_the_canvas_export_reads_as_canvas_s_importer_reads_it(store):
    store.put_person("4711", "Smith, Ann", "ann@x.edu")
    _submit(store, person="4711")
    store.finish(store.claim("a", "w").id, RESULT, "v")
    cfg = ServiceConfig(assignments=[Policy("a", canvas_id=90210), Policy("b")])
    titles = {"a": "Assignment A (week 1)", "b": "Assignment B"}
    text = exports.canvas_csv(exports.counting_rows(cfg, store, titles), titles, {"a": 10, "b": 5},
                              {p.id: p.canvas_id for p in cfg.assignments})
    got = canvas_reads(text)
    # with its canvas_id, the column is Canvas's own assignment; without, a title Canvas matches exactly
    assert [(a["title"], a["id"]) for a in got["assignments"]] == [("Assignment A (week 1)", 90210),
                                                                    ("Assignment B", None)]
    assert got["points"] == {"Assignment A (week 1)": "10", "Assignment B": "5"}
    ann = next(s for s in got["students"] if s["id"] == "4711")
    assert ann["name"] == "Smith, Ann" and ann["login"] == "ann@x.edu"
    assert ann["grades"] == {"Assignment A (week 1)": "7", "Assignment B": ""}  # blank: Canvas leaves it as is
    assert {s["id"] for s in got["students"]} == {"alice", "bob", "4711"}  # students only, no staff row


def test_tokens_and_ids_survive_a_csv_file(store, tmp_path):
    """A token starting with `-` would get the CSV writer's anti-formula apostrophe: none ever does."""
    from autograder.service.roster import issue_links, write_links
    from autograder.service.store import new_secret

    assert not any(new_secret().startswith("-") for _ in range(3000))
    links = issue_links(store, "http://x", 1)
    write_links(tmp_path / "links.csv", links)
    with open(tmp_path / "links.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["token"] for r in rows] == [x.token for x in links]
    assert all(store.person_for_token(r["token"]).id == r["id"] for r in rows)


def test_a_stored_file_whose_bytes_changed_is_never_graded_nor_reused(store, tmp_path):
    """A grade is of the bytes the student uploaded: the service hashes the stored file again before it grades
    it, and before it takes an identical upload as stored already."""
    from autograder.service.grading import GradingPool, SlotState
    from tests.helpers import DEMO_COURSE

    blobs = Blobs(tmp_path / "blobs")
    digest = blobs.put(b"def f():\n    return 1\n")
    assert blobs.damaged(digest) is None
    blobs.path(digest).write_bytes(b"def f():\n    return 2\n")  # same size, other bytes (a disk, a hand)
    assert "bytes changed" in blobs.damaged(digest)
    assert blobs.put(b"def f():\n    return 1\n") == digest and blobs.damaged(digest) is None  # written again
    blobs.path(digest).write_bytes(b"def f():\n    return 2\n")
    assert "cannot be read" in blobs.damaged("f" * 64)

    sid = store.add_submission("alice", "demo", digest, "py", "mine.py", 22, 0, ["hidden"])
    pool = GradingPool(ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE), store, blobs,
                       tmp_path / "logs")
    job = store.claim("demo", "w")
    # the check comes before any worker is asked: none is started here
    kept = pool._grade(None, None, SlotState("demo-0", "demo"), 0, job)  # type: ignore[arg-type]
    assert kept == (None, None)
    [row] = store.results_of(sid)
    assert row.status == "internal_error" and row.needs_ta and row.total == 0
    result = store.latest_results("demo")[sid]
    assert "not a judgement of your work" in json.dumps(result.result) and "bytes changed" in json.dumps(result.result)


def test_a_services_process_workers_share_a_server_that_warms_up_at_once(tmp_path: Path):
    """A slot's worker grades submission after submission: its server warms up as it starts (between
    requests), so no student's submission waits for the warm-up a batch's second submission used to."""
    from autograder.batch.backends.process import ProcessBackend
    from autograder.service.grading import GradingPool
    from tests.helpers import DEMO_COURSE

    pool = GradingPool(ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE),
                       ServiceStore(tmp_path / "s.sqlite"), Blobs(tmp_path / "blobs"), tmp_path / "logs")
    backend = pool.backend("demo")
    assert isinstance(backend, ProcessBackend) and backend.warm_up


def test_a_data_folder_of_the_first_schema_is_migrated_with_its_rows(tmp_path):
    import sqlite3

    from autograder.service.store import _SCHEMA, SCHEMA_VERSION

    old = sqlite3.connect(tmp_path / "old.sqlite")
    old.executescript(_SCHEMA)
    old.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    old.execute("INSERT INTO people VALUES ('alice', 'Alice', '', 'student', 0)")
    old.commit()
    old.close()
    store = ServiceStore(tmp_path / "old.sqlite")
    assert store.person("alice") is not None and store.store_problems() == []
    assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == \
        str(SCHEMA_VERSION)


def test_a_damaged_database_is_refused_with_what_to_do(tmp_path):
    from autograder.errors import StoreDamaged

    (tmp_path / "bad.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreDamaged, match="bad.sqlite.*damaged.*backup"):
        ServiceStore(tmp_path / "bad.sqlite")
