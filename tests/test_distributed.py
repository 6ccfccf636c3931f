"""The distributed-training assignment: ranks inside the sandbox, hostile rank code, two assignments in one course.

Hostile submissions (tests/exploits_distributed/) are graded in one batch on
ddp_step and global_metrics, an honest one last: a rank that hangs, a rank
that exits early, code that never cleans up (its own subgroup, a daemon
holding the group's sockets, a stray thread) and code that destroys the
grader's group each cost only their own tests, leave no process behind, and
the batch goes on.
"""

from __future__ import annotations

import io
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.runner import BatchError, BatchOptions, grade_batch
from autograder.grade import GradeOptions, grade
from autograder.load import load
from autograder.sandbox.client import SandboxConfig
from autograder.sandbox.isolation import Limits
from autograder.session import Budget, Session
from tests.helpers import ROOT, processes_named

ASSIGNMENT = "distributed-training"
EXPLOITS = ROOT / "tests" / "exploits_distributed"
NAME = "tg-ddp-evil"


@pytest.fixture(scope="module")
def quick_course(tmp_path_factory) -> Path:
    """A copy of the assignment whose rank exercises have short time limits (a hang costs little)."""
    course = tmp_path_factory.mktemp("course")
    for side in ("assignments", "solutions"):
        shutil.copytree(
            ROOT / side / ASSIGNMENT, course / side / ASSIGNMENT, ignore=shutil.ignore_patterns("__pycache__")
        )
    for ex in ("ddp_step", "global_metrics"):
        toml = course / "assignments" / ASSIGNMENT / ex / "exercise.toml"
        toml.write_text(re.sub(r"^timeout = .*$", "timeout = 4", toml.read_text(), flags=re.M))
    return course


@pytest.fixture(scope="module")
def graded(server, quick_course):
    a = load_assignment(ASSIGNMENT, quick_course)
    files = sorted(EXPLOITS.glob("*.py"))
    options = GradeOptions(
        exercises=["ddp_step", "global_metrics"], budget=Budget(cell_seconds=10, submission_seconds=180)
    )
    results = grade(a, files, options=options, server=server)
    return {r.submission: r for r in results}


def _exercise(r, ex_id):
    return next(e for e in r.exercises if e.id == ex_id)


def test_the_honest_submission_graded_last_gets_full_marks(graded):
    assert len(graded) == len(list(EXPLOITS.glob("*.py")))
    honest = graded["zz_honest"]
    graded_here = [e for e in honest.exercises if e.tests]
    assert sum(e.points for e in graded_here) == sum(e.max_points for e in graded_here) == 20, honest


@pytest.mark.parametrize("name", sorted(p.stem for p in EXPLOITS.glob("*.py") if p.stem != "zz_honest"))
def test_hostile_rank_code_costs_only_its_own_exercise(graded, name):
    r = graded[name]
    assert r.status == "graded", r
    metrics = _exercise(r, "global_metrics")
    assert metrics.points == metrics.max_points == 10, f"{name}: {metrics}"


def test_a_hanging_rank_costs_its_tests_within_their_time_limit(graded):
    ddp = _exercise(graded["hang_rank"], "ddp_step")
    assert ddp.points == 0
    for t in ddp.tests:
        assert t.status == "timeout", t
        assert re.search(r"rank 1 never returned within \d+ s while ranks? 0", t.message), t.message
        assert t.seconds < 4 + 3, t  # the test's own limit (4 s), and the ranks were stopped before it


def test_a_rank_that_exits_early_is_named(graded):
    ddp = _exercise(graded["exit_early"], "ddp_step")
    assert ddp.points == 0
    # No waiting for a time limit: the other ranks are stopped at once. Waiting would take at least the ranks'
    # whole budget (ranks_timeout(): the test's limit less its 2 s margin), whatever the machine's load; a fixed
    # 4 s failed under load (4.6 s at load 8, 8.7 s at load 12, the ranks stopped at once all the same).
    budget = load_assignment(ASSIGNMENT, ROOT).exercise("ddp_step").timeout - 2.0
    for t in ddp.tests:
        assert t.status == "error" and "rank 1 ended its process before returning" in t.message, t.message
        assert t.seconds < budget, t


def test_code_that_never_cleans_up_leaves_nothing_behind(graded):
    ddp = _exercise(graded["leaves_everything_behind"], "ddp_step")
    # correct arithmetic: the grader cleans up after it. What its leaks cost is its own: each call leaves a
    # thread and a daemon behind, and once the rank's sandbox runs out of threads or processes (its limit of
    # 64), a later call of the same exercise fails to start one in the student's own code: which runs out first
    # depends on timing (the conventions' check, the exercise's eighth call)
    failed = [t for t in ddp.tests if t.status != "passed"]
    assert all("can't start new thread" in t.message or ("_daemon" in t.message and "os.fork()" in t.message)
               for t in failed), failed
    assert ddp.points >= ddp.max_points - sum(t.max_points for t in failed) and len(failed) <= 1, ddp
    deadline = time.monotonic() + 5  # the kernel tears a PID namespace down asynchronously
    while processes_named(NAME) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_named(NAME) == [], "a rank or its daemon survived grading"


def test_destroying_the_graders_group_costs_only_that_check(graded):
    ddp = _exercise(graded["destroys_group"], "ddp_step")
    failed = [t for t in ddp.tests if t.status != "passed"]
    assert [t.misconception for t in failed] == ["destroys_group"], failed
    assert ddp.points == ddp.max_points - failed[0].max_points


def test_ranks_talk_over_the_sandbox_loopback_and_nothing_else(server):
    """lo is up inside the sandbox's network namespace; the host's loopback and the internet stay unreachable."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    accepted: list[bytes] = []

    def accept() -> None:
        listener.settimeout(3)
        try:
            conn, _ = listener.accept()
            accepted.append(conn.recv(10))
            conn.close()
        except OSError:
            pass

    t = threading.Thread(target=accept)
    t.start()
    cell = (
        "import socket\n"
        "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
        "c = socket.create_connection(srv.getsockname(), timeout=2); c.sendall(b'hi')\n"
        "a, _ = srv.accept(); LOOPBACK = a.recv(2).decode()\n"
        "REACHED = []\n"
        f"for host, port in (('127.0.0.1', {port}), ('1.1.1.1', 80), ('8.8.8.8', 53)):\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=1).sendall(b'stolen'); REACHED.append(host)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "net.py"
        p.write_text(cell)
        session = Session(server, load(p), SandboxConfig(), Budget(cell_seconds=20))
        try:
            sb = session.ensure()
            _, loop = sb.request("getattr", target=None, name="LOOPBACK", timeout=10)
            _, reached = sb.request("getattr", target=None, name="REACHED", timeout=10)
            network = sb.protections.get("network", "")
        finally:
            session.close()
    t.join()
    listener.close()
    assert loop == "hi", "the sandbox's own loopback does not work"
    assert reached == [] and accepted == [], f"the sandbox reached {reached} {accepted}"
    assert network == "isolated (own network namespace, loopback only: nothing else reachable)", network


def test_two_assignments_need_two_output_folders(server, tmp_path):
    """One course, two assignments: a second assignment never overwrites the first one's gradebook and report."""
    out = tmp_path / "out"
    stub = ROOT / "samples-distributed-training" / "bob.py"
    opts = BatchOptions(out=out, worker=WorkerConfig(course=str(ROOT), assignment=ASSIGNMENT), jobs=1, progress="plain")
    summary = grade_batch(load_assignment(ASSIGNMENT, ROOT), [stub], opts, stream=io.StringIO(), err=io.StringIO())
    assert [r.total for r in summary.results] == [0]
    gradebook = (out / "gradebook.csv").read_text()
    assert gradebook.splitlines()[0].startswith("submission,student,name,ddp_step,sharding,global_metrics"), gradebook
    before = gradebook
    other = BatchOptions(out=out, worker=WorkerConfig(course=str(ROOT), assignment="pytorch-fundamentals"), jobs=1)
    with pytest.raises(BatchError, match=rf"holds the grades of {ASSIGNMENT}.*--out .*out-pytorch-fundamentals"):
        grade_batch(load_assignment("pytorch-fundamentals", ROOT), [stub], other, stream=io.StringIO(),
                    err=io.StringIO())
    assert (out / "gradebook.csv").read_text() == before  # nothing of the first assignment was touched
    assert "distributed" in (out / "report.html").read_text().lower()


@pytest.mark.slow
def test_validate_passes_on_the_distributed_training_assignment():
    from autograder.authoring.validate import validate
    from autograder.grade import default_jobs

    lines: list[str] = []
    # --quick: each mutant and alternative on the suites it can reach (its own); a full run grades every case on
    # every suite, which takes several times longer on 2 cores
    code = validate(ASSIGNMENT, ROOT, jobs=default_jobs(), full=False, out=lines.append)
    assert code == 0, "\n".join(lines)


RANKS_PROBE = (
    "from autograder.sandbox.ranks import run_ranks\n"
    "def go(mod, name, world_size):\n"
    "    return run_ranks(world_size, getattr(mod, name), timeout=15)\n"
)


def test_every_rank_counts_against_the_process_limit(server, tmp_path):
    """Ranks and whatever they fork share one process limit; a fork bomb in every rank stays bounded."""
    p = tmp_path / "bomb.py"
    p.write_text(
        "import os, time\n"
        "def bomb(rank, world_size):\n"
        "    n = 0\n"
        "    try:\n"
        "        for _ in range(500):\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(30)\n"
        "                os._exit(0)\n"
        "            n += 1\n"
        "    except OSError:\n"
        "        pass\n"
        "    return n\n"
    )
    config = SandboxConfig(limits=Limits(max_processes=40))
    # graded code cannot import the grader; probes can, while they load (as the distributed suites' do)
    session = Session(server, load(p), config, Budget(cell_seconds=30), probes={"ddp": RANKS_PROBE})
    try:
        sb = session.ensure()
        _, report = sb.request("probe", [["bomb", 3], {}], exercise="ddp", name="go", timeout=30)
    finally:
        session.close()
    ranks = report["ranks"]
    assert [r["status"] for r in ranks] == ["ok"] * 3, ranks
    forked = sum(r["value"] for r in ranks)
    assert 0 < forked < 40, f"the ranks forked {forked} processes under a limit of 40"


def test_what_a_rank_prints_reaches_the_output(server, tmp_path):
    """A rank ends with os._exit; its buffered prints are flushed first (students debug with print)."""
    p = tmp_path / "printer.py"
    p.write_text(
        "def talk(rank, world_size):\n"
        "    print(f'rank {rank} of {world_size} says hi')\n"
        "    return rank\n"
    )
    session = Session(server, load(p), SandboxConfig(), Budget(cell_seconds=30), probes={"ddp": RANKS_PROBE})
    try:
        sb = session.ensure()
        _, report = sb.request("probe", [["talk", 2], {}], exercise="ddp", name="go", timeout=30)
        time.sleep(0.2)  # the output pipe is drained by a reader thread
        output = sb.output
    finally:
        session.close()
    assert [r["value"] for r in report["ranks"]] == [0, 1]
    assert "rank 0 of 2 says hi" in output and "rank 1 of 2 says hi" in output, output


def test_a_rank_gloo_aborts_inside_a_collective_is_told_apart_from_exiting():
    """Issue 23 item 4: a ragged all_gather makes gloo abort the ranks (SIGABRT, no Python exception). The
    student reads which collective it was, from which line of theirs, and the likely cause (different sizes on
    different ranks), never "your code exited"."""
    from autograder.authoring.trial import try_case

    a = load_assignment(ASSIGNMENT, ROOT)
    r = try_case(a, "global_metrics", "mutants/accuracy_ragged_all_gather.py", keyword="padding_duplicates or ignores")
    tests = [t for e in r.exercises for t in e.tests if "global_accuracy" in t.name]
    assert tests and all(t.status != "passed" for t in tests), tests
    for t in tests:
        assert "aborted rank" in t.message and "inside torch.distributed.all_gather" in t.message, t.message
        assert "dist.all_gather(out, hits)" in t.message, t.message  # the student's own line
        assert "different sizes" in t.message and "sys.exit()" not in t.message, t.message
