"""Each judge worker has a memory limit of its own; going over it costs one test, not the batch."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

from autograder.batch.backends import Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from autograder.grade import GradeOptions
from autograder.session import Budget
from tests.helpers import DEMO_COURSE, ROOT

HONEST = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)
# 240 MiB: under the wire's reply limit (256 MiB), over what this judge may hold on top of itself
HUGE = HONEST + "\n# %%\nimport torch\n\ndef double(x):\n    return torch.zeros(240 * 2**20, dtype=torch.uint8)\n"


def test_a_reply_over_the_judges_own_limit_fails_that_test_and_the_batch_goes_on(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    toml = course / "assignments/demo/basics/exercise.toml"
    toml.write_text(re.sub(r"timeout = .*", "timeout = 60", toml.read_text()))  # 240 MiB on a loaded host
    jobs = []
    for name, text in (("huge.py", HUGE), ("honest.py", HONEST)):
        (tmp_path / name).write_text(text)
        jobs.append(Job(id=name, name=name, path=tmp_path / name))
    cfg = WorkerConfig(course=str(course), assignment="demo", judge_memory_gb=0.5,
                       options=GradeOptions(budget=Budget(submission_seconds=120)))
    got = {}
    ProcessBackend(cfg, 1, tmp_path).grade_jobs(
        jobs, lambda job, result, error, worker: got.setdefault(job.name, (result, error))
    )
    honest, error = got["honest.py"]
    assert error == "" and honest["status"] == "graded", error
    assert sum(t["points"] for e in honest["exercises"] for t in e["tests"]) == 6
    huge, error = got["huge.py"]
    assert error == "", error
    tests = {t["name"]: t for e in huge["exercises"] for t in e["tests"]}
    t = tests["double(x) doubles every entry"]
    assert t["status"] == "error" and "grader" in t["message"] and "memory" in t["message"], t["message"]
    assert tests["Counter keeps a running total"]["status"] == "passed", tests["Counter keeps a running total"]


# The judge grades with its collector off, so that only reference counts free memory: what a failed test
# leaves reachable only through a cycle (its traceback's frames) stays, as it may for long with it on.
NO_COLLECTOR = """
import gc, json, sys
from pathlib import Path
from autograder.assignment import load_assignment
from autograder.batch.backends.worker import limit_judge_memory
from autograder.grade import GradeOptions, grade
from autograder.warmup import start_server

def data_mib():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmData")).split()[1]) / 1024

assignment = load_assignment("demo", Path(sys.argv[1]))
server = start_server(assignment, GradeOptions())
gc.disable()
limit_judge_memory(0.5)
with server:
    grade(assignment, [Path(sys.argv[3])], server=server)  # the judge's own imports, and a first submission
    before = data_mib()
    (result,) = grade(assignment, [Path(sys.argv[2])], server=server)
    kept = data_mib() - before
print(json.dumps({"kept": kept, **{t.name: [t.status, t.message] for e in result.exercises for t in e.tests}}))
"""


def test_a_reply_too_large_for_the_judge_is_freed_when_its_test_ends(tmp_path):
    (tmp_path / "huge.py").write_text(HUGE)
    (tmp_path / "honest.py").write_text(HONEST)
    run = subprocess.run([sys.executable, "-c", NO_COLLECTOR, str(DEMO_COURSE), str(tmp_path / "huge.py"),
                          str(tmp_path / "honest.py")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    tests = json.loads(run.stdout.splitlines()[-1])
    assert tests["kept"] < 64, f"{tests['kept']:.0f} MiB of the reply outlived its test"
    assert tests["double(x) doubles every entry"][0] == "error"
    for name in ("row_means(x) averages each row", "Counter keeps a running total"):  # they need the memory back
        assert tests[name][0] == "passed", (name, tests[name])


class _Big:
    """Stands for a large value a failed test's frame held."""


def test_releasing_a_failed_tests_frames_frees_their_locals_and_leaves_a_suspended_generator_running():
    import gc
    import weakref

    from autograder.judge.plugin import release_frames

    def check():
        big = _Big()
        seen = weakref.ref(big)
        try:
            raise ValueError("inside")
        except ValueError as e:
            big.error = e  # a cycle: only a collection would free it
            raise AssertionError(seen) from e

    caught = []

    def fixture():  # a fixture still in use: an exception it caught holds its frame
        try:
            raise KeyError("handled")
        except KeyError as e:
            caught.append(e)
        yield "set up"
        yield "still running"

    running = fixture()
    assert next(running) == "set up"
    enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            check()
        except AssertionError as e:
            exc = e
        (seen,) = exc.args
        exc.__context__.__context__ = caught[0]  # the generator's frame is on the chain
        release_frames(exc)
        del exc
        assert seen() is None, "the failed test's local outlived it"
        assert next(running) == "still running"
    finally:
        if enabled:
            gc.enable()


SEEN: list = []  # weak references the suite below takes to what its failing phases held

TEARDOWN_SUITE = '''

class _Held:
    pass


def _hold():
    import weakref

    from tests.judge.test_judge_memory import SEEN

    held = _Held()
    SEEN.append(weakref.ref(held))
    try:
        raise ValueError("inside")
    except ValueError as e:
        held.error = e  # a cycle: only a collection would free it
        raise


@pytest.fixture
def breaks_at_teardown():
    yield
    _hold()


@pytest.mark.points(1)
def test_fails_and_its_fixture_too(student, breaks_at_teardown):
    """Fails, and so does its fixture's teardown"""
    _hold()
'''


def test_every_phase_of_a_failed_test_releases_what_its_frames_held(tmp_path):
    import gc

    from autograder.assignment import load_assignment
    from autograder.grade import grade

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    with open(course / "solutions/demo/counter/test_hidden.py", "a") as f:
        f.write(TEARDOWN_SUITE)
    (tmp_path / "alice.py").write_text(HONEST)
    SEEN.clear()
    enabled = gc.isenabled()
    gc.disable()  # only reference counts free memory: what a cycle keeps stays
    try:
        (result,) = grade(load_assignment("demo", course), [tmp_path / "alice.py"])
        assert len(SEEN) == 2, SEEN  # the call, then the teardown
        assert [ref() is None for ref in SEEN] == [True, True], "a failed phase's local outlived its test"
    finally:
        if enabled:
            gc.enable()
    failed = [t for e in result.exercises for t in e.tests if t.status != "passed"]
    assert [t.name for t in failed] == ["Fails, and so does its fixture's teardown"], failed
