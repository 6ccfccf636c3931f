"""Batch grading end to end on the demo course: parallel workers, resume, kill and rerun, LMS zips, nbgrader."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.docker import DockerBackend
from autograder.grade import GradeOptions
from autograder.sandbox.isolation import Limits
from tests.helpers import DEMO_COURSE, ROOT

REF = (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text() + "\n# %%\n" + (
    DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
SQUARES = REF.replace("x * 2", "x * x") if "x * 2" in REF else REF + "\n# %%\ndef double(x):\n    return x * x\n"


def tg(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *args, "--assignment", "demo",
                           "--course", str(DEMO_COURSE), "--progress", "plain"],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def gradings(out: Path) -> dict[str, int]:
    with sqlite3.connect(out / "grades.sqlite") as db:
        return dict(db.execute("SELECT student, COUNT(*) FROM gradings GROUP BY student").fetchall())


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def gradebook(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((out / "gradebook.csv").read_text().splitlines()))


def test_grading_a_folder_twice_grades_it_once(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "bob.py").write_text(SQUARES)
    (subs / "carol.ipynb").write_text("{ not a notebook")
    out = tmp_path / "out"
    before = fingerprint(subs)

    first = tg(str(subs), "--out", str(out), "--jobs", "2")
    assert first.returncode == 0, first.stderr
    assert "3 to grade, 0 already graded" in first.stdout and "alice: 6 / 6 points" in first.stdout
    assert gradings(out) == {"alice": 1, "bob": 1, "carol": 1}
    book = gradebook(out)
    assert [(r["submission"], r["student"], r["total"], r["status"]) for r in book] == [
        ("alice", "alice", "6", "graded"), ("bob", "bob", "5", "graded"), ("carol", "carol", "0", "load_error")]

    second = tg(str(subs), "--out", str(out), "--jobs", "2")
    assert second.returncode == 0, second.stderr
    assert "0 to grade, 3 already graded" in second.stdout
    assert gradings(out) == {"alice": 1, "bob": 1, "carol": 1}
    assert gradebook(out) == book
    assert fingerprint(subs) == before  # submissions are never modified

    (subs / "bob.py").write_text(REF)  # bob resubmits: only bob is graded again
    third = tg(str(subs), "--out", str(out), "--jobs", "1")
    assert "1 to grade, 2 already graded" in third.stdout, third.stderr
    assert gradings(out) == {"alice": 1, "bob": 2, "carol": 1}
    assert [r["total"] for r in gradebook(out)] == ["6", "6", "0"]

    # Per-student outputs and the class report
    for student in ("alice", "bob", "carol"):
        for name in ("feedback.md", "feedback.html", "results.json"):
            assert (out / student / name).is_file()
    report = (out / "report.html").read_text()
    # alice and bob now pass every test (carol's file is unreadable): two charts, none of tests failed
    assert "Most common misconceptions" in report and report.count("data:image/png;base64,") == 2
    assert "carol.ipynb is not a readable Jupyter notebook" in report
    everything = "".join(p.read_text() for p in out.rglob("*") if p.suffix in (".md", ".html", ".json", ".csv"))
    assert "def test_" not in everything and "misconceptions=" not in everything


def _live_workers(marker: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker in (d / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def test_a_batch_killed_halfway_is_completed_by_a_rerun_grading_each_submission_once(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    names = [f"s{i:02d}" for i in range(10)]
    for n in names:  # a short pause per submission, so the kill lands mid-batch
        (subs / f"{n}.py").write_text("import time\ntime.sleep(0.4)\n# %%\n" + REF)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(subs), "--out", str(out), "--assignment", "demo",
           "--course", str(DEMO_COURSE), "--jobs", "2", "--progress", "plain"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    committed = 0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if (out / "grades.sqlite").exists():
            try:
                committed = sum(gradings(out).values())
            except sqlite3.Error:
                continue
            if committed >= 3:
                break
    assert proc.poll() is None, "the batch finished before it could be killed: make the submissions slower"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = sum(gradings(out).values())
    assert 3 <= killed_at < len(names)
    deadline = time.monotonic() + 20  # its workers die with it
    while _live_workers(str(out)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _live_workers(str(out)) == []

    rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(names) - killed_at} to grade, {killed_at} already graded" in rerun.stdout
    assert gradings(out) == {n: 1 for n in names}  # every submission graded exactly once, none twice
    assert [r["total"] for r in gradebook(out)] == ["6"] * len(names)


def test_an_lms_zip_is_graded_per_student_with_the_newest_counting(tmp_path):
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(zipfile.ZipInfo("smithjohn_101_5001_hw.py", (2024, 2, 1, 9, 0, 0)), SQUARES)
        z.writestr(zipfile.ZipInfo("smithjohn_late_101_5002_hw-1.py", (2024, 2, 2, 9, 0, 0)), REF)
        z.writestr(zipfile.ZipInfo("doejane_102_5003_hw.py", (2024, 2, 1, 9, 0, 0)), SQUARES)
        z.writestr(zipfile.ZipInfo("../../outside_1_2_hw.py", (2024, 2, 1, 9, 0, 0)), REF)
    out = tmp_path / "out"
    p = tg(str(archive), "--out", str(out), "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert "outside_1_2_hw.py: refused" in p.stderr and "superseded" in p.stderr
    assert [(r["student"], r["submission"], r["total"]) for r in gradebook(out)] == [
        ("doejane_102", "doejane_102_5003_hw", "5"), ("smithjohn_101", "smithjohn_late_101_5002_hw-1", "6")]
    assert [r["name"] for r in gradebook(out)] == ["doejane", "smithjohn"]
    inputs = csv.DictReader((out / "inputs.csv").read_text().splitlines())
    fates = {r["source"].rsplit(":", 1)[-1]: r["fate"] for r in inputs}
    assert fates["smithjohn_101_5001_hw.py"] == "superseded" and fates["../../outside_1_2_hw.py"] == "unreadable"
    assert not (tmp_path / "outside_1_2_hw.py").exists()
    assert "smithjohn_101_5001_hw.py" in (out / "report.html").read_text()

    again = tg(str(archive), "--out", str(out), "--jobs", "1", "--regrade")  # --regrade forces
    assert "2 to grade, 0 already graded" in again.stdout, again.stderr
    assert gradings(out) == {"doejane_102": 2, "smithjohn_101": 2}


def test_nbgrader_layout_scores_go_into_nbgrader_gradebook(tmp_path, monkeypatch):
    pytest.importorskip("nbgrader")
    # nbgrader runs its `alembic` command when it creates a gradebook: the venv's bin must be on PATH
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    import nbformat
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    for student, code in (("alice", REF), ("bob", SQUARES)):
        d = course / "submitted" / student / "ps1"
        d.mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), str(d / "ps1.ipynb"))
        (d / "timestamp.txt").write_text("2024-02-01 10:00:00.000000 UTC")
    db = course / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:  # an existing course: the assignment and a student are known
        gb.add_assignment("ps1")
        gb.add_student("alice", first_name="Alice")
    out = tmp_path / "out"
    p = tg(str(course / "submitted"), "--out", str(out), "--jobs", "1", "--nbgrader-db", str(db))
    assert p.returncode == 0, p.stderr
    assert [(r["student"], r["total"]) for r in gradebook(out)] == [("alice", "6"), ("bob", "5")]
    with Gradebook(f"sqlite:///{db}") as gb:
        alice = gb.find_submission("ps1", "alice")
        assert (alice.score, alice.max_score) == (6.0, 6.0)
        assert gb.find_student("alice").first_name == "Alice"  # existing records are kept
        assert gb.find_grade("basics", "ps1", "ps1", "bob").score == 3.0
        assert gb.find_grade("counter", "ps1", "ps1", "bob").auto_score == 2.0
        assert gb.find_submission("ps1", "bob").timestamp.year == 2024


def test_docker_run_arguments_exactly(tmp_path):
    cfg = WorkerConfig(course=str(DEMO_COURSE), assignment="demo",
                       options=GradeOptions(limits=Limits(memory_bytes=2 * 2**30)))
    backend = DockerBackend(cfg, 2, tmp_path, image="torchgrader:cpu", docker=sys.executable,
                            stage_dir=tmp_path / "stage")
    user = "10001:10001" if os.getuid() == 0 else f"{os.getuid()}:{os.getgid()}"
    argv = backend.argv(0)
    inner = argv[-1]
    assert argv[:-1] == [
        sys.executable, "run", "-i", "--rm", "--pull", "never", "--name", f"torchgrader-{os.getpid()}-0",
        "--user", user,
        "--network", "none", "--read-only", "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=1g",
        "--memory", "4g", "--memory-swap", "4g", "--cpus", "1", "--pids-limit", "512", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges", "--security-opt", "seccomp=unconfined",
        "--security-opt", "apparmor=unconfined", "--security-opt", "systempaths=unconfined",
        "-e", "OMP_NUM_THREADS=1", "-e", "TORCHGRADER_CONTAINER_MEMORY=4",
        "-e", "HOME=/tmp/judge",
        "-e", "USER=judge", "-v", f"{(tmp_path / 'stage').resolve()}:/course:ro", "--entrypoint", "python",
        "torchgrader:cpu", "-m", "autograder.batch.backends.worker"]
    assert WorkerConfig.from_json(inner).course == "/course"
    # Only the grading material is mounted: hidden suites and probes, never references, alternatives, mutants.
    staged = sorted(p.relative_to(tmp_path / "stage").as_posix() for p in (tmp_path / "stage").rglob("*.py"))
    assert "solutions/demo/counter/probes.py" in staged and "solutions/demo/basics/test_hidden.py" in staged
    assert not [p for p in staged if p.endswith("reference.py") or "/mutants/" in p or "/alternatives/" in p]
    assert str(DEMO_COURSE) not in " ".join(argv)

    gpu = DockerBackend(cfg, 1, tmp_path, image="registry.example/torchgrader:gpu", docker=sys.executable,
                        stage_dir=tmp_path / "stage2").argv(0)
    assert gpu[gpu.index("--gpus") + 1] == "all"  # auto: the GPU image gets the GPUs
    one = DockerBackend(cfg, 1, tmp_path, image="torchgrader:cpu", docker=sys.executable, gpus="device=1",
                        stage_dir=tmp_path / "stage3").argv(0)
    assert one[one.index("--gpus") + 1] == "device=1"


def test_the_documented_backend_line_is_the_one_the_backend_builds(tmp_path):
    """docker/README.md's `docker run` line of --backend docker: every literal option is in the real argv."""
    import re

    text = (ROOT / "docker" / "README.md").read_text()
    block = re.search(r"The exact `docker run` line.*?```\n(.*?)```", text, re.S).group(1)
    words = block.replace("[--gpus all]", "").split()
    cfg = WorkerConfig(course=str(DEMO_COURSE), assignment="demo")
    argv = DockerBackend(cfg, 1, tmp_path, docker=sys.executable, stage_dir=tmp_path / "stage").argv(0)
    pairs = set(zip(argv, argv[1:], strict=False))
    literal = [(a, b) for a, b in zip(words, words[1:], strict=False)
               if a.startswith("--") and not b.startswith("--") and "<" not in a + b and "'" not in b]
    assert literal and [p for p in literal if p not in pairs] == []
    flags = {w for w in words if w.startswith("--") and "<" not in w}
    assert flags <= set(argv) | {"--gpus"}


def test_podman_run_arguments_differ_from_dockers_where_podman_does(tmp_path, monkeypatch):
    from autograder.batch.backends import docker as docker_backend
    from autograder.batch.backends.docker import PodmanBackend

    cfg = WorkerConfig(course=str(DEMO_COURSE), assignment="demo")
    docker = DockerBackend(cfg, 1, tmp_path, docker=sys.executable, stage_dir=tmp_path / "s1").argv(0)
    podman = PodmanBackend(cfg, 1, tmp_path, docker=sys.executable, stage_dir=tmp_path / "s2")
    monkeypatch.setattr(docker_backend.os, "getuid", lambda: 1001)  # rootless: an ordinary user runs the batch
    argv = podman.argv(0)
    assert argv[argv.index("--userns") + 1] == "keep-id" and argv[argv.index("--user") + 1].startswith("1001:")
    assert "unmask=ALL" in argv and "systempaths=unconfined" not in argv
    assert not [a for a in argv if a.startswith("TORCHGRADER_CONTAINER_MEMORY")]  # podman may ignore --memory
    same = [a for a in docker if a != "systempaths=unconfined" and "TORCHGRADER_CONTAINER_MEMORY" not in a
            and not a.startswith("{") and ":" not in a]
    assert [a for a in same if a not in argv] == []


def test_a_container_that_never_starts_says_what_failed_and_what_to_do(tmp_path):
    from autograder.batch.backends import WorkerDied
    from autograder.batch.backends.pipe import WorkerPipe

    fake_docker = tmp_path / "docker"  # what `docker run` does when the image is missing: exit 125
    fake_docker.write_text("#!/bin/sh\necho 'Unable to find image torchgrader:cpu locally' >&2\nexit 125\n")
    fake_docker.chmod(0o755)
    cfg = WorkerConfig(course=str(DEMO_COURSE), assignment="demo")
    backend = DockerBackend(cfg, 1, tmp_path, docker=str(fake_docker), stage_dir=tmp_path / "stage")
    with pytest.raises(WorkerDied) as e:
        WorkerPipe(backend.argv(0), "worker 0", tmp_path / "w.log", explain=backend.explain_exit)
    msg = str(e.value)
    assert "exited with code 125 before it was ready: docker could not create or start the container" in msg
    assert "docker build --network host -f docker/cpu/Dockerfile -t torchgrader:cpu ." in msg
    assert "Unable to find image" in msg  # docker's own words follow
    assert "(code 125) to start" not in msg


FAKE_WORKER = """
import json, os, sys
log = open(sys.argv[1], "a")
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    job = json.loads(line)
    log.write(job["name"] + "\\n"); log.flush()
    if job["name"] == "crash.py":
        os._exit(3)
    print(json.dumps({"id": job["id"], "result": {"name": job["name"]}}), flush=True)
"""


def test_a_job_that_kills_its_worker_is_retried_once_then_reported(tmp_path):
    from autograder.batch.backends import Job
    from autograder.batch.backends.process import ProcessBackend

    script, seen = tmp_path / "fake_worker.py", tmp_path / "seen.log"
    script.write_text(FAKE_WORKER)

    class Fake(ProcessBackend):
        def argv(self, slot):
            return [sys.executable, str(script), str(seen)]

    jobs = []
    for name in ("a.py", "crash.py", "b.py", "c.py"):
        (tmp_path / name).write_text("x = 1\n")
        jobs.append(Job(id=name, name=name, path=tmp_path / name))
    got = {}
    Fake(WorkerConfig(course=".", assignment="demo"), 2, tmp_path).grade_jobs(
        jobs, lambda job, result, error, worker: got.setdefault(job.name, (result, error)))
    assert {k: v[0] for k, v in got.items() if k != "crash.py"} == {n: {"name": n} for n in ("a.py", "b.py", "c.py")}
    result, error = got["crash.py"]
    assert result is None and "exited with code 3 while grading crash.py" in error
    assert seen.read_text().split().count("crash.py") == 2  # retried once on a fresh worker, then reported


def test_the_bytes_graded_are_the_bytes_hashed_even_when_the_file_changes_in_between(tmp_path, monkeypatch):
    """Issue 22 (TOCTOU): a file rewritten after it was hashed is graded as hashed, and stored under that hash."""
    import io

    from autograder.assignment import load_assignment
    from autograder.batch import runner

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    plan = runner._plan

    def swap_then_plan(*args, **kwargs):  # after the inputs were hashed, before any job reads them
        (subs / "alice.py").write_text(SQUARES)
        return plan(*args, **kwargs)

    monkeypatch.setattr(runner, "_plan", swap_then_plan)
    worker = WorkerConfig(course=str(DEMO_COURSE), assignment="demo", options=GradeOptions(exercises=["basics"]))
    opts = runner.BatchOptions(out=tmp_path / "out", worker=worker, jobs=1, progress="plain", report=False)
    summary = runner.grade_batch(load_assignment("demo", DEMO_COURSE, only=["basics"]), [subs], opts,
                                 stream=io.StringIO(), err=io.StringIO())
    [r] = summary.results
    assert r.sha256 == hashlib.sha256(REF.encode()).hexdigest()
    assert r.total == 4  # REF's score on basics: the bytes hashed, not the SQUARES written after (3)
    assert (subs / "alice.py").read_text() == SQUARES  # the input is never modified


def test_each_students_feedback_is_written_once_per_run_and_a_rerun_says_who_copied(tmp_path, monkeypatch):
    """A rerun with nothing to grade wrote every reused student's files, then the flagged ones' again."""
    from autograder.batch import runner

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "bob.py").write_text(REF)  # byte-identical to alice's: both are flagged as duplicates
    (subs / "carol.py").write_text(SQUARES)
    writes: list[str] = []
    write = runner.write_submission

    def counted(r, out, attention=()):
        writes.append(r.student)
        return write(r, out, attention)

    monkeypatch.setattr(runner, "write_submission", counted)
    first = _basics_batch(subs, tmp_path / "out", jobs=1, report=False)
    assert first.graded == 3
    # as each result arrives, then again for the two whose duplicate is known once the class is in
    assert sorted(writes) == ["alice", "alice", "bob", "bob", "carol"]

    writes.clear()
    second = _basics_batch(subs, tmp_path / "out", jobs=1, report=False)
    assert (second.graded, second.reused) == (0, 3)
    assert sorted(writes) == ["alice", "bob", "carol"]  # once each, the flag included
    for student in ("alice", "bob"):
        page = (tmp_path / "out" / student / "feedback.md").read_text()
        assert "About your submission" in page and "identical" in page.lower(), page
    assert "About your submission" not in (tmp_path / "out" / "carol" / "feedback.md").read_text()
    assert json.loads((tmp_path / "out" / "alice" / "results.json").read_text())["score"] == 4


def test_the_class_review_runs_while_the_class_is_graded_and_only_once(tmp_path, monkeypatch):
    """The review reads only the files: it starts with the grading, before the first result (its CPU spreads
    over the batch rather than lengthening its end), and its flags (byte-identical copies) still reach the
    gradebook."""
    import threading

    from autograder.batch import review, runner

    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("alice", "bob"):
        (subs / f"{name}.py").write_text(REF)  # duplicates of each other
    (subs / "carol.py").write_text(SQUARES)
    calls: list[tuple[str, int]] = []  # (thread, results delivered so far)
    delivered = [0]
    reviewing = review.review_class
    advance = runner.make_progress

    def counted(*args, **kwargs):
        calls.append((threading.current_thread().name, delivered[0]))
        return reviewing(*args, **kwargs)

    def progress(*args, **kwargs):
        p = advance(*args, **kwargs)
        original = p.advance

        def step(r):
            original(r)
            delivered[0] += 1

        p.advance = step
        return p

    monkeypatch.setattr(review, "review_class", counted)
    monkeypatch.setattr(runner, "make_progress", progress)
    summary = _basics_batch(subs, tmp_path / "out", jobs=2, report=True)
    assert summary.graded == 3
    assert calls == [("tg-review", 0)], calls  # once, in its thread, before any of the three results was in
    flagged = {row["student"]: row["review"] for row in gradebook(tmp_path / "out")}
    assert "identical" in flagged["alice"].lower() and "identical" in flagged["bob"].lower(), flagged
    assert "identical" not in flagged["carol"].lower()


def test_an_early_review_is_used_only_for_the_entries_it_read(tmp_path, monkeypatch):
    from autograder.assignment import load_assignment
    from autograder.batch import review
    from autograder.batch.inputs import expand

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "bob.py").write_text(REF)
    entries = expand([subs], tmp_path / "ws", exclude=[], assignment="demo").entries
    assignment = load_assignment("demo", DEMO_COURSE, only=["basics"])
    early = review.EarlyReview(assignment, entries, similarity=False)
    assert early.result(entries, similarity=False) is None  # never started: write_outputs reviews itself
    early.start()
    got = early.result(entries, similarity=False)
    assert got is not None and set(got.attention) == {"alice", "bob"}
    assert early.result(entries[:1], similarity=False) is None  # other entries
    assert early.result(entries, similarity=True) is None  # asked for the similar pairs it did not compute

    def broken(*args, **kwargs):
        raise OSError("unreadable")

    monkeypatch.setattr(review, "review_class", broken)
    failed = review.EarlyReview(assignment, entries, similarity=False)
    failed.start()
    assert failed.result(entries, similarity=False) is None  # write_outputs reviews again and says what failed


def _basics_batch(subs: Path, out: Path, *, jobs: int, report: bool):
    """grade_batch (in this process) of a folder on the demo course's basics exercise."""
    import io

    from autograder.assignment import load_assignment
    from autograder.batch import runner

    worker = WorkerConfig(course=str(DEMO_COURSE), assignment="demo", options=GradeOptions(exercises=["basics"]))
    opts = runner.BatchOptions(out=out, worker=worker, jobs=jobs, progress="plain", report=report)
    assignment = load_assignment("demo", DEMO_COURSE, only=["basics"])
    return runner.grade_batch(assignment, [subs], opts, stream=io.StringIO(), err=io.StringIO())
