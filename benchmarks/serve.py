"""The submission service under load, against the batch's own throughput, in one run (issue 24).

Loopback only, bounded (a few minutes on 2 cores with the defaults):

1. ``torchgrader serve`` on 127.0.0.1 (a free port) with ``--workers`` warm workers;
   ``--students`` simulated students submit distinct real notebooks (the samples,
   each made unique) at once and poll until graded: accepted per minute, and
   p50/p95 time from upload to feedback;
2. ``torchgrader grade`` of the same files with as many jobs: the batch's
   graded per minute (worker start-up included, as a TA sees it);
3. the web tier's overhead per submission: the upload, status and feedback-page
   requests' own time against the grading time the workers report;
4. the web process's memory (RSS) over ``--memory-n`` submissions (uploads, status
   calls, pages), sampled every tenth: flat is the goal;
5. a lone student on an idle service: ``--lone-n`` distinct correct notebooks submitted
   one after another, upload to "graded" (polled every 50 ms) and the workers' own
   grading time, with one worker and with two (the waiting slot lends its share: the
   submission is graded by two judges, judge/spread.py), side by side.

    python benchmarks/serve.py [--students 8] [--workers 2] [--memory-n 1000] [--lone-n 6]

Timing is never asserted in the tests; the behaviours behind these figures are.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readable(p: Path) -> bool:
    """A sample the service accepts (one sample is a damaged notebook on purpose: the service refuses it)."""
    if p.suffix == ".py":
        return True
    try:
        json.loads(p.read_text())
        return True
    except ValueError:
        return False


SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.suffix in (".ipynb", ".py") and _readable(p))
CLI = [sys.executable, "-c", "from autograder.cli import run; run()"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _distinct(i: int, out: Path) -> Path:
    """Sample ``i`` (round robin) made unique: an extra comment cell or line."""
    src = SAMPLES[i % len(SAMPLES)]
    dest = out / f"s{i:04d}{src.suffix}"
    if src.suffix == ".ipynb":
        nb = json.loads(src.read_text())
        nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                            "source": f"# submission {i}"})
        dest.write_text(json.dumps(nb))
    else:
        dest.write_text(src.read_text() + f"\n# submission {i}\n")
    return dest


class Server:
    def __init__(self, root: Path, workers: int, queue_limit: int, timeout: float = 120.0) -> None:
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        roster = root / "roster.csv"
        with open(roster, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "name", "email", "role"])
            for i in range(2000):
                w.writerow([f"s{i:04d}", f"Student {i}", f"s{i}@example.edu", "student"])
        (root / "service.toml").write_text(
            f'[server]\nport = {self.port}\n[grading]\ncourse = "{ROOT}"\nworkers = {workers}\n'
            f"queue_limit = {queue_limit}\nsubmission_timeout = {timeout}\n"
            "[limits]\nsubmissions_per_minute = 10000\nrequests_per_minute = 1000000\nupload_kb = 4096\n")
        self.log = open(root / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([*CLI, "serve", "--config", str(root / "service.toml"), "--data",
                                      str(root / "data"), "--roster", str(roster), "--links", str(root / "links.csv")],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        else:
            raise SystemExit("the server never became ready; see " + str(root / "server.log"))
        with open(root / "links.csv") as f:
            self.tokens = {r["id"]: r["token"] for r in csv.DictReader(f)}

    def cpu_s(self) -> float:
        """CPU seconds the web process itself has used (its workers are children: not counted)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def call(self, path: str, who: str, data: bytes | None = None,
             ctype: str | None = None) -> tuple[int, bytes, float]:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        if ctype:
            headers["Content-Type"] = ctype
        t = time.perf_counter()
        try:
            with urllib.request.urlopen(urllib.request.Request(self.url + path, data=data, headers=headers),
                                        timeout=60) as r:
                body = r.read()
                return r.status, body, time.perf_counter() - t
        except urllib.error.HTTPError as e:
            return e.code, e.read(), time.perf_counter() - t

    def upload(self, who: str, path: Path) -> tuple[int, dict, float]:
        b = "benchboundary"
        body = (f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n\r\n').encode() \
            + path.read_bytes() + f"\r\n--{b}--\r\n".encode()
        code, raw, secs = self.call("/api/submissions", who, body, f"multipart/form-data; boundary={b}")
        return code, json.loads(raw or b"{}"), secs

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def service_phase(root: Path, files: list[Path], workers: int, timeout: float) -> dict:
    srv = Server(root, workers, queue_limit=len(files) + 10, timeout=timeout)
    lat: list[float] = []
    web: list[float] = []
    grading: list[float] = []
    lock = threading.Lock()

    def student(i: int, path: Path) -> None:
        who = f"s{i:04d}"
        t0 = time.perf_counter()
        code, got, up = srv.upload(who, path)
        assert code == 202, (code, got)
        spent = up
        while True:
            code, raw, secs = srv.call(f"/api/submissions/{got['id']}", who)
            spent += secs
            status = json.loads(raw)
            if status["status"] in ("graded", "error"):
                break
            time.sleep(1.0)  # as `torchgrader submit --wait` polls
        code, page, secs = srv.call(f"/submissions/{got['id']}", who)
        spent += secs
        done = time.perf_counter() - t0
        with srv_db(root) as db:
            seconds = db.execute("SELECT seconds FROM results WHERE submission = ?", (got["id"],)).fetchone()[0]
        with lock:
            lat.append(done)
            web.append(spent)
            grading.append(seconds)

    t = time.perf_counter()
    cpu0 = srv.cpu_s()
    threads = [threading.Thread(target=student, args=(i, p)) for i, p in enumerate(files)]
    try:  # stopped even when a phase fails: an orphaned server would grade on and skew what follows
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        cpu = srv.cpu_s() - cpu0
    finally:
        srv.stop()
    wall = time.perf_counter() - t
    return {"n": len(files), "wall": wall, "per_min": 60 * len(files) / wall, "p50": _pct(lat, 0.5),
            "p95": _pct(lat, 0.95), "web_s": statistics.median(web), "grading_s": statistics.median(grading),
            "web_cpu_s": cpu / len(files)}


def srv_db(root: Path):
    import sqlite3

    return sqlite3.connect(f"file:{root / 'data' / 'service.sqlite'}?mode=ro", uri=True)


def batch_phase(root: Path, files: list[Path], workers: int, timeout: float) -> dict:
    folder = root / "batch-in"
    folder.mkdir()
    for f in files:
        (folder / f.name).write_bytes(f.read_bytes())
    t = time.perf_counter()
    subprocess.run([*CLI, "grade", str(folder), "--assignment", "pytorch-fundamentals", "--out", str(root / "out"),
                    "--jobs", str(workers), "--progress", "plain", "--submission-timeout", str(timeout)],
                   check=True, capture_output=True)
    wall = time.perf_counter() - t
    return {"wall": wall, "per_min": 60 * len(files) / wall}


def memory_phase(root: Path, n: int) -> list[tuple[int, float]]:
    """The web process's RSS over ``n`` accepted submissions (small .py files; the workers grade in the background)."""
    srv = Server(root, 1, queue_limit=n + 10)
    tiny = root / "tiny.py"
    samples = []
    try:
        for i in range(n):
            tiny.write_text(f"def shares_storage(a, b):\n    return False  # {i}\n")
            who = f"s{i % 2000:04d}"
            code, got, _ = srv.upload(who, tiny)
            assert code == 202, (code, got)
            srv.call(f"/api/submissions/{got['id']}", who)
            srv.call("/api/submissions", who)
            if i % 10 == 0:
                srv.call(f"/submissions/{got['id']}", who)
            if i % (n // 10 or 1) == 0 or i == n - 1:
                samples.append((i + 1, srv.rss_mb()))
    finally:
        srv.stop()
    return samples


def lone_phase(root: Path, files: list[Path], workers: int, timeout: float) -> dict:
    """One student at a time on an idle service: upload to graded, and the grading time the worker reports."""
    srv = Server(root, workers, queue_limit=10, timeout=timeout)
    waited: list[float] = []
    grading: list[float] = []
    try:
        for i, path in enumerate(files):
            who = f"s{i:04d}"
            t0 = time.perf_counter()
            code, got, _ = srv.upload(who, path)
            assert code == 202, (code, got)
            while True:
                _, raw, _ = srv.call(f"/api/submissions/{got['id']}", who)
                if json.loads(raw)["status"] in ("graded", "error"):
                    break
                time.sleep(0.05)
            waited.append(time.perf_counter() - t0)
            with srv_db(root) as db:
                row = db.execute("SELECT seconds, total, max_total FROM results WHERE submission = ?",
                                 (got["id"],)).fetchone()
            assert row[1] == row[2], f"{path.name}: {row[1]} of {row[2]}"
            grading.append(row[0])
    finally:
        srv.stop()
    return {"waited": statistics.median(waited), "grading": statistics.median(grading)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-n", type=int, default=1000)
    ap.add_argument("--lone-n", type=int, default=6, help="correct notebooks a lone student submits one by one")
    ap.add_argument("--submission-timeout", type=float, default=120.0,
                    help="seconds per submission, the same for both (dave.py walks the file system until stopped)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tg-bench-serve-") as tmp:
        root = Path(tmp)
        (root / "files").mkdir()
        files = [_distinct(i, root / "files") for i in range(args.students)]
        (root / "svc").mkdir()
        s = service_phase(root / "svc", files, args.workers, args.submission_timeout)
        b = batch_phase(root, files, args.workers, args.submission_timeout)
        (root / "mem").mkdir()
        m = memory_phase(root / "mem", args.memory_n)
        sys.path.insert(0, str(ROOT))
        from autograder.assignment import load_assignment
        from benchmarks.batch import correct_class

        correct = correct_class(load_assignment("pytorch-fundamentals", ROOT), args.lone_n, root / "correct")
        lone = {}
        for n in (1, 2):
            (root / f"lone{n}").mkdir()
            lone[n] = lone_phase(root / f"lone{n}", correct, n, args.submission_timeout)
    print(f"service: {s['n']} students at once, {args.workers} workers: {s['per_min']:.1f} graded/min; "
          f"upload to feedback p50 {s['p50']:.1f} s, p95 {s['p95']:.1f} s")
    print(f"batch (`torchgrader grade --jobs {args.workers}`, same files): {b['per_min']:.1f} graded/min "
          f"(service/batch {s['per_min'] / b['per_min']:.2f}x)")
    share = 100 * s["web_cpu_s"] / s["grading_s"]
    print(f"web tier per submission: {1000 * s['web_cpu_s']:.0f} ms of the web process's CPU (upload, a status call "
          f"a second until graded, the feedback page; its workers not counted), {share:.1f}% "
          f"of the median grading time ({s['grading_s']:.1f} s); those requests' wall time {s['web_s']:.1f} s")
    print("web process RSS over submissions: " + ", ".join(f"{n}: {mb:.0f} MB" for n, mb in m))
    print(f"a lone student on an idle service ({args.lone_n} distinct correct notebooks, one at a time), median "
          f"upload to graded: {lone[1]['waited']:.2f} s with 1 worker, {lone[2]['waited']:.2f} s with 2 (the waiting "
          f"slot lent: two judges) = {lone[2]['waited'] / lone[1]['waited']:.2f}x; the workers' grading time "
          f"{lone[1]['grading']:.2f} s and {lone[2]['grading']:.2f} s")


if __name__ == "__main__":
    main()
