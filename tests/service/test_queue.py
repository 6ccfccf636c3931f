"""The service's queue in a real SQLite store: fair order, positions, a store of the earlier schema.

What a course meets in the last hour: one student uploading again and again, and staff regrading everyone
in the middle of it. The order asserted is the one the workers take jobs in (``ServiceStore.claim``).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from autograder.service.store import SCHEMA_VERSION, ServiceStore

RESULT = {"submission": "submission", "path": "x", "assignment": "a", "status": "graded", "exercises": []}


@pytest.fixture
def store(tmp_path):
    s = ServiceStore(tmp_path / "s.sqlite")
    for p in ("alice", "bob", "carol", "dave"):
        s.put_person(p, p.title())
    s.put_person("ta", "The TA", role="staff")
    return s


def _submit(store: ServiceStore, person: str, suites: tuple[str, ...] = ("hidden",)) -> str:
    return store.add_submission(person, "a", "0" * 64, "py", "x.py", 10, 0, list(suites))


def _drain(store: ServiceStore, workers: int = 1) -> list[str]:
    """Whose submissions the workers take, in order (each job finished as soon as it is taken)."""
    out = []
    while (job := store.claim("a", "w")) is not None:
        out.append(store.submission(job.submission).person)
        store.finish(job.id, RESULT, "v")
    return out


def test_a_burst_from_one_student_never_comes_before_anothers_first(store):
    first = _submit(store, "alice")
    for _ in range(5):
        _submit(store, "alice")
    running = store.claim("a", "w0")
    assert running.submission == first
    _submit(store, "bob")
    _submit(store, "carol")
    _submit(store, "bob")
    # bob's and carol's first come before alice's second, though alice's five were queued long before
    nxt = [store.submission(j.submission).person for j in store.order("a")]
    assert nxt == ["bob", "carol", "alice", "bob", "alice", "alice", "alice", "alice"]
    store.finish(running.id, RESULT, "v")
    assert _drain(store) == nxt


def test_a_class_regrade_delays_a_fresh_submission_by_the_jobs_already_running(store):
    subs = [_submit(store, p) for p in ("alice", "bob", "carol") for _ in range(2)]
    assert len(_drain(store)) == len(subs)
    store.queue_regrade(subs, "ta")  # "regrade everyone", in the middle of the last hour
    running = [store.claim("a", "w0"), store.claim("a", "w1")]  # two workers busy with regrades
    fresh = _submit(store, "dave")
    alice_again = _submit(store, "alice")
    order = store.order("a")
    assert [j.submission for j in order[:2]] == [fresh, alice_again]  # before every waiting regrade
    assert all(j.reason.startswith("regrade") for j in order[2:]) and len(order) == len(subs) - 2 + 2
    assert store.position(store.jobs_of(fresh)[0]) == 1 and store.position(store.jobs_of(alice_again)[0]) == 2
    for j in running:
        store.finish(j.id, RESULT, "v")
    got = store.claim("a", "w0")
    assert got.submission == fresh  # the next worker free takes it
    store.finish(got.id, RESULT, "v")
    nxt = store.claim("a", "w0")
    assert nxt.submission == alice_again and nxt.reason == "submit"
    store.finish(nxt.id, RESULT, "v")
    assert len(_drain(store)) == len(subs) - 2  # then the regrades, each once


def test_positions_are_the_order_the_workers_take_jobs_in(store):
    for p in ("alice", "alice", "bob", "alice", "carol", "bob"):
        _submit(store, p, ("public", "hidden"))  # before the deadline: public tests first, then hidden
    predicted = {j.id: store.position(j) for j in store.queue("a")}
    taken = []
    while (job := store.claim("a", "w")) is not None:
        taken.append(job.id)
        store.finish(job.id, RESULT, "v")
    assert [predicted[i] for i in taken] == list(range(1, len(taken) + 1))


def test_what_each_student_has_waiting_is_counted_per_student(store):
    for _ in range(3):
        _submit(store, "alice")
    _submit(store, "bob", ("public", "hidden"))
    assert store.waiting_of("alice") == 3 and store.waiting_of("bob") == 1 and store.waiting_of("carol") == 0
    job = store.claim("a", "w")
    store.finish(job.id, RESULT, "v")
    assert store.waiting_of("alice") == 2


def test_a_data_folder_of_the_first_schema_opens_and_keeps_its_jobs(tmp_path):
    path = tmp_path / "old.sqlite"
    ServiceStore(path).close()
    db = sqlite3.connect(path)  # made as version 1 made it: no jobs.note
    db.executescript("DROP TABLE jobs; CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, submission TEXT "
                     "NOT NULL, assignment TEXT NOT NULL, suites TEXT NOT NULL, reason TEXT NOT NULL, state TEXT "
                     "NOT NULL, tries INTEGER NOT NULL DEFAULT 0, enqueued REAL NOT NULL, started REAL, finished "
                     "REAL, worker TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '');"
                     "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
                     "INSERT INTO people VALUES ('alice', 'Alice', '', 'student', 0);"
                     "INSERT INTO submissions VALUES ('s1', 'alice', 'a', 'x', 'py', 'x.py', 1, 0, 0);"
                     "INSERT INTO jobs (submission, assignment, suites, reason, state, enqueued) "
                     "VALUES ('s1', 'a', 'hidden', 'submit', 'queued', 0);")
    db.commit()
    db.close()
    s = ServiceStore(path)
    assert s.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    job = s.claim("a", "w0", note="graded on CPU")
    assert job.submission == "s1" and job.note == "graded on CPU"
    ServiceStore(path)  # opening it again changes nothing


def test_a_students_standings_read_only_their_own_newest_results(store):
    """A home page read every result of the class, and the dashboard did so once per student: a class of 300
    parsed 90,000 results of about 45 KB per dashboard. Results nobody reads are left unparsed here on purpose."""
    from autograder.service import exports, policy
    from autograder.service.config import Policy, ServiceConfig

    mine, theirs = _submit(store, "alice"), _submit(store, "bob")
    for _ in range(2):
        job = store.claim("a", "w")
        store.finish(job.id, {**RESULT, "exercises": []}, "v")
    store.queue_regrade([mine], "ta")
    job = store.claim("a", "w")
    store.finish(job.id, RESULT, "v")
    with store.tx() as t:  # bob's result, and alice's superseded one, are not JSON any more
        t.execute("UPDATE results SET result = '{' WHERE submission = ? OR id = (SELECT MIN(id) FROM results "
                  "WHERE submission = ?)", (theirs, mine))
    p = Policy("a")
    assert [st.submission.id for st in policy.standings(p, store, "alice")] == [mine]
    cfg = ServiceConfig(assignments=[p])
    with pytest.raises(ValueError):  # the class's rows read bob's newest result: it is there to be read
        exports.counting_rows(cfg, store, {"a": "A"})
    with store.tx() as t:
        t.execute("UPDATE results SET result = ? WHERE submission = ?", (json.dumps(RESULT), theirs))
    rows = exports.counting_rows(cfg, store, {"a": "A"})  # alice's superseded result is never parsed
    assert {r.person.id for r in rows if r.result is not None} == {"alice", "bob"}
