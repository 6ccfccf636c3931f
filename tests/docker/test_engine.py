"""The container lines of the docs, run on a real engine: the scores outside a container, contained attacks,
kills that lose nothing, a stale or missing image named, and a refused set-up that grades nothing.

The `docker run` line is read out of docker/README.md (never a copy kept here), so the docs are
the lines these tests run. Containers run with ``--network none`` (the build with ``--network
host``): no bridge network. One image serves every test (conftest.image).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.docker.conftest import leftover_containers
from tests.helpers import DEMO_COURSE, ROOT

pytestmark = pytest.mark.docker

SAMPLES = {"alice": ("110", "graded"), "bob": ("0", "graded"), "carol": ("68.5", "graded"),
           "dave": ("1.25", "graded"), "erin": ("0", "load_error")}  # as `grade samples/` gives outside a container
REF = (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text() + "\n# %%\n" + (
    DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
SQUARES = REF.replace("x * 2", "x * x")

# A hostile cell: reports what it could reach in an exception (which the judge records as a cell error).
HOSTILE = r'''
import os, socket, subprocess
seen = []
for host in ("1.1.1.1", "127.0.0.1"):
    try:
        socket.create_connection((host, 53), timeout=2)
        seen.append(f"net-{host}=reached")
    except OSError as e:
        seen.append(f"net-{host}={type(e).__name__}")
for p in ("/course/solutions", "/course", "/checkout", "/out", "/submissions"):
    seen.append(f"sees-{p}={os.path.exists(p)}")
for p in ("/out/escape", "/submissions/escape", "/escape", "/etc/escape", "/usr/escape"):
    try:
        open(p, "w").write("x")
        seen.append(f"wrote-{p}=yes")
    except OSError as e:
        seen.append(f"wrote-{p}=no")
subprocess.Popen(["sleep", "4321"], start_new_session=True)
raise RuntimeError("SEEN " + " ".join(seen) + " END")
'''


def docs_block(heading: str, must: str) -> str:
    """The ```bash block under ``heading`` of docker/README.md that contains ``must``."""
    text = (ROOT / "docker" / "README.md").read_text()
    section = text[text.index(heading):]
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        if must in block:
            return block
    raise AssertionError(f"docker/README.md has no bash block with {must!r} under {heading!r}")


def docs_run_line() -> str:
    return docs_block("## Run", "docker run")


def run_bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=900, env={**os.environ, **env})


def gradebook(out: Path) -> dict[str, tuple[str, str]]:
    rows = csv.DictReader((out / "gradebook.csv").read_text().splitlines())
    return {r["student"]: (r["total"], r["status"]) for r in rows}


def stored(out: Path, student: str | None = None) -> list[str]:
    if not (out / "grades.sqlite").exists():
        return []
    try:
        with sqlite3.connect(out / "grades.sqlite") as db:
            rows = db.execute("select student, result from results").fetchall()
    except sqlite3.OperationalError:  # a batch that is just starting: its tables are not there yet
        return []
    return [r for s, r in rows if student is None or s == student]


class Ran(subprocess.CompletedProcess):
    pid: int  # the batch's process: its containers are named torchgrader-PID-SLOT

    def containers(self) -> list[str]:
        """This batch's containers the engine still lists (other tests' batches and services run beside it)."""
        return leftover_containers(f"torchgrader-{self.pid}-")


def tg(*args: str, timeout: float = 900, **kw) -> Ran:
    argv = [sys.executable, "-m", "autograder.cli", "grade", *args, "--progress", "plain"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    ran = Ran(argv, proc.returncode, out, err)
    ran.pid = proc.pid
    return ran


def demo_folder(path: Path, **subs: str) -> Path:
    path.mkdir()
    for name, code in subs.items():
        (path / f"{name}.py").write_text(code)
    return path


def _class_folder(tmp_path: Path, with_hostile: bool = True) -> Path:
    """submissions/ (the samples, and a hostile one) beside out/, as docker/README.md's Run section has them."""
    work = tmp_path / "class"
    shutil.copytree(ROOT / "samples", work / "submissions")
    if with_hostile:
        (work / "submissions" / "mallory.py").write_text(HOSTILE)
    return work


def test_the_documented_docker_run_line_grades_the_samples_as_outside_and_contains_an_attack(image, tmp_path):
    work = _class_folder(tmp_path)
    p = run_bash(docs_run_line(), work, COURSE=str(ROOT))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    got = gradebook(work / "out")
    assert {k: got[k] for k in SAMPLES} == SAMPLES
    # The protections header, honest inside the container: isolated, and the memory line names the container.
    assert "private root" in p.stdout and "NOT isolated" not in p.stdout
    assert "per container: the container's --memory (8.0 GiB) bounds the judge and every sandbox together" in p.stdout
    # The hostile submission: no network, no course material, the judge's folders invisible, nothing written.
    seen = re.search(r"SEEN (.*?) END", stored(work / "out", "mallory")[0]).group(1).split()
    facts = dict(s.split("=", 1) for s in seen)
    assert facts["net-1.1.1.1"] != "reached" and facts["net-127.0.0.1"] != "reached"
    assert all(facts[f"sees-{p}"] == "False" for p in ("/course/solutions", "/course", "/checkout", "/out",
                                                           "/submissions"))
    assert not [k for k, v in facts.items() if k.startswith("wrote-") and v != "no"]
    assert not list(work.rglob("escape")) and not (ROOT / "escape").exists()
    expected = sorted([*(f.name for f in (ROOT / "samples").iterdir()), "mallory.py"])
    assert sorted(f.name for f in (work / "submissions").iterdir()) == expected  # nothing added to them
    assert subprocess.run(["pgrep", "-f", "sleep 4321"], capture_output=True).returncode == 1  # no process left


def test_without_systempaths_the_line_grades_nothing_and_says_which_flag(image, tmp_path):
    """The kernel's real refusal (a fresh /proc under Docker's masked paths): stop, name it, store nothing."""
    work = _class_folder(tmp_path, with_hostile=False)
    line = docs_run_line().replace("--security-opt systempaths=unconfined", "")
    assert "systempaths" not in line
    p = run_bash(line, work, COURSE=str(ROOT))
    assert p.returncode != 0
    assert "the kernel refused its /proc" in p.stderr and "Operation not permitted" in p.stderr
    assert "add `--security-opt systempaths=unconfined`" in p.stderr and "Traceback" not in p.stderr
    assert stored(work / "out") == [] and not (work / "out" / "alice").exists()


def test_a_stale_image_is_named_before_grading(image, tmp_path):
    """A hidden suite fixed after the build: the docs' line says "rebuild the image", and grades nothing."""
    course = tmp_path / "checkout"
    for part in ("assignments", "solutions", "autograder"):
        shutil.copytree(ROOT / part, course / part, ignore=shutil.ignore_patterns("__pycache__"))
    suite = next((course / "solutions" / "pytorch-fundamentals").rglob("test_hidden.py"))
    suite.write_text(suite.read_text() + "\n# a fix made after the image was built\n")
    work = _class_folder(tmp_path, with_hostile=False)
    p = run_bash(docs_run_line(), work, COURSE=str(course))
    assert p.returncode != 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "newer than this image" in p.stderr and "grading material of 'pytorch-fundamentals'" in p.stderr
    assert "rebuild the image: docker build --network host -f docker/cpu/Dockerfile -t torchgrader:cpu ." in p.stderr
    assert stored(work / "out") == []

    # --backend docker: the image's grader code is older than this checkout's
    dockerfile = (f"FROM {image}\nUSER root\nRUN python -c \"import json; r = json.load(open('/opt/torchgrader/"
                  "material.json')); r['code'] = 'older'; json.dump(r, open('/opt/torchgrader/material.json', 'w'))\""
                  "\nUSER judge\n")
    (tmp_path / "stale").mkdir()
    (tmp_path / "stale" / "Dockerfile").write_text(dockerfile)
    with _built("torchgrader:stale-test", tmp_path / "stale") as stale:
        p = _grade_alice_with(stale, tmp_path)
        assert p.returncode == 2
        assert "older than this checkout: the grader's code (autograder/) changed" in p.stderr
        assert f"rebuild the image: docker build --network host -f docker/cpu/Dockerfile -t {stale} ." in p.stderr
        assert stored(tmp_path / "o") == []


@contextlib.contextmanager
def _built(tag: str, context: Path):
    """An image built from ``context`` (its Dockerfile) for one test, removed afterwards."""
    b = subprocess.run(["docker", "build", "--network", "none", "-t", tag, str(context)],
                       capture_output=True, text=True, timeout=300)
    assert b.returncode == 0, b.stderr
    try:
        yield tag
    finally:
        subprocess.run(["docker", "image", "rm", tag], capture_output=True, timeout=120)


def _grade_alice_with(image: str, tmp_path: Path):
    """`--backend docker` on one demo submission with ``image``, into tmp_path/o."""
    subs = demo_folder(tmp_path / "subs", alice=REF)
    return tg(str(subs), "--out", str(tmp_path / "o"), "--assignment", "demo", "--course", str(DEMO_COURSE),
              "--backend", "docker", "--docker-image", image)


def test_backend_docker_grades_a_folder_the_same(image, tmp_path):
    subs = demo_folder(tmp_path / "subs", alice=REF, bob=SQUARES)
    out = tmp_path / "out"
    p = tg(str(subs), "--out", str(out), "--jobs", "2", "--backend", "docker", "--docker-image", image,
           "--assignment", "demo", "--course", str(DEMO_COURSE))
    assert p.returncode == 0, p.stderr
    # As outside a container (tests/batch/test_runner.py grades the same two to these scores with the process backend)
    assert gradebook(out) == {"alice": ("6", "graded"), "bob": ("5", "graded")}
    result = json.loads(stored(out, "alice")[0])
    assert "private root" in result["protections"]["filesystem"]
    assert result["protections"]["memory"].startswith("per container")
    assert p.containers() == []  # at once: the batch waits for the engine's --rm before it exits


def test_a_closed_backend_leaves_no_container_listed(image, tmp_path):
    """close() returns only once the engine has removed its containers (--rm runs a moment after exit)."""
    from autograder.batch.backends import Job
    from autograder.batch.backends.config import WorkerConfig
    from autograder.batch.backends.docker import DockerBackend

    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    backend = DockerBackend(WorkerConfig(course=str(DEMO_COURSE), assignment="demo"), 1, tmp_path, image=image)
    got: list[tuple] = []
    backend.grade_jobs([Job("alice", "alice.py", sub)], lambda job, result, why, worker: got.append((result, why)))
    assert got and got[0][0] is not None, got
    backend.close()
    assert leftover_containers(f"{backend.run_tag}-") == []
    assert not backend.stage_dir.exists()


def test_a_missing_image_or_a_refused_option_gives_dockers_message_and_what_to_do(image, tmp_path):
    subs = demo_folder(tmp_path / "subs", alice=REF)
    common = ["--assignment", "demo", "--course", str(DEMO_COURSE), "--backend", "docker"]
    p = tg(str(subs), "--out", str(tmp_path / "o1"), *common, "--docker-image", "torchgrader:no-such-tag")
    assert p.returncode == 2
    assert "No such image" in p.stderr and "torchgrader:no-such-tag" in p.stderr  # docker's own words
    assert "docker build --network host -f docker/cpu/Dockerfile -t torchgrader:no-such-tag ." in p.stderr
    p = tg(str(subs), "--out", str(tmp_path / "o2"), *common, "--docker-image", image, "--gpus", "all")
    assert p.returncode == 2
    assert "docker could not create or start the container" in p.stderr  # what it means, then docker's message:
    assert re.search(r"could not select device driver|nvidia|gpu", p.stderr, re.I)
    assert stored(tmp_path / "o1") == stored(tmp_path / "o2") == []
    assert p.containers() == []


def test_an_engine_that_cannot_run_the_image_is_named_not_blamed_on_the_image(engine, tmp_path):
    """A container that never starts (rootless Podman without /dev/fuse, an image without `cat`) says so and
    how to try the engine, instead of calling the image older than the grader."""
    (tmp_path / "ctx").mkdir()
    (tmp_path / "ctx" / "material.json").write_text("{}")
    (tmp_path / "ctx" / "Dockerfile").write_text("FROM scratch\nCOPY material.json /opt/torchgrader/material.json\n")
    with _built("torchgrader:no-cat-test", tmp_path / "ctx") as tag:
        p = _grade_alice_with(tag, tmp_path)
        assert p.returncode == 2
        assert f"docker could not create or start a container from {tag} to read its build record" in p.stderr
        assert "executable file not found" in p.stderr  # the engine's own words
        assert f"docker run --rm --network none {tag} true" in p.stderr
        assert "predates" not in p.stderr
        assert stored(tmp_path / "o") == []


def _wait(what, seconds: float = 120.0, every: float = 0.5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def test_killing_a_container_or_the_batch_loses_nothing(image, tmp_path):
    slow = "import time\ntime.sleep(8)\n# %%\n" + REF
    subs = demo_folder(tmp_path / "subs", a_slow=slow, bob=SQUARES, carol=REF, dave=SQUARES)
    out = tmp_path / "out"
    args = [sys.executable, "-m", "autograder.cli", "grade", str(subs), "--out", str(out), "--jobs", "2",
            "--backend", "docker", "--docker-image", image, "--assignment", "demo", "--course", str(DEMO_COURSE),
            "--progress", "plain"]
    batch = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mine = f"torchgrader-{batch.pid}-"
    first = _wait(lambda: [n for n in leftover_containers(mine) if n.endswith("-0")])[0]
    _wait(lambda: len(stored(out)) >= 1, 180)  # the workers are grading; slot 0 took a_slow first, and sleeps
    subprocess.run(["docker", "kill", first], capture_output=True, timeout=60)
    stdout, stderr = batch.communicate(timeout=600)
    assert batch.returncode == 0, stderr[-3000:]
    assert gradebook(out) == {"a_slow": ("6", "graded"), "bob": ("5", "graded"), "carol": ("6", "graded"),
                              "dave": ("5", "graded")}
    assert len(stored(out)) == 4  # each once: the killed worker's submission was graded again, nothing twice
    assert leftover_containers(mine) == []

    # The whole batch killed after its first result: the rerun keeps it and grades only the rest.
    out2 = tmp_path / "out2"
    args2 = [a if a != str(out) else str(out2) for a in args]
    batch = subprocess.Popen(args2, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine = f"torchgrader-{batch.pid}-"
    _wait(lambda: len(stored(out2)) >= 1, 300)
    kept = len(stored(out2))
    batch.send_signal(signal.SIGKILL)
    batch.wait(timeout=60)
    _wait(lambda: leftover_containers(mine) == [], 120)  # each container ends when its batch is gone
    rerun = subprocess.run(args2, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    done = re.search(r"(\d+) graded now .*?, (\d+) already graded", rerun.stdout)
    assert done and int(done.group(2)) >= kept and int(done.group(1)) + int(done.group(2)) == 4
    assert gradebook(out2) == gradebook(out)


def test_the_image_has_the_local_cpu_wheel_and_runs_as_judge(image):
    got = subprocess.run(["docker", "run", "--rm", "--network", "none", "--entrypoint", "sh", image, "-c",
                          "id -u; python -c 'import torch; print(torch.__version__)'"],
                         capture_output=True, text=True, timeout=120)
    assert got.stdout.split() == ["10001", "2.13.0+cpu"], got.stderr  # from docker/wheels/, not torch's index
