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

The burst (issue 45), the last hour before a deadline: ``--students`` (300) distinct correct notebooks, one
per student, uploaded over ``--spread`` (60) seconds to the service with its defaults (workers, queue),
beside ``torchgrader grade`` of the same files; ``--dask`` runs it again on a local Dask cluster:

    python benchmarks/serve.py --burst [--students 300] [--spread 60] [--dask] [--json out.json]

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
    def __init__(self, root: Path, workers: int | None, queue_limit: int | None, timeout: float = 120.0,
                 grading: str = "", students: int = 2000) -> None:
        """A server on a free port; ``None``: the service's own default for that key (the burst uses them)."""
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        roster = root / "roster.csv"
        with open(roster, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "name", "email", "role"])
            for i in range(students):
                w.writerow([f"s{i:04d}", f"Student {i}", f"s{i}@example.edu", "student"])
            w.writerow(["staff0", "The TA", "ta@example.edu", "staff"])
        keys = (f"workers = {workers}\n" if workers else "") + (f"queue_limit = {queue_limit}\n" if queue_limit else "")
        # one address stands for the whole class here: the per-address limit is a real class's, times its size
        (root / "service.toml").write_text(
            f'[server]\nport = {self.port}\n[grading]\ncourse = "{ROOT}"\n{keys}'
            f"submission_timeout = {timeout}\n{grading}"
            "[limits]\nsubmissions_per_minute = 10000\nrequests_per_minute = 1000000\nupload_kb = 4096\n"
            f"connections_per_address = {students + 50}\n")
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


def batch_phase(root: Path, files: list[Path], workers: int | None, timeout: float, nice: int = 0) -> dict:
    """``torchgrader grade`` of the same files; ``workers`` None: its default (one per core); ``nice``: at the
    service's graders' priority (on a machine others load too, both then compete with them alike)."""
    folder = root / "batch-in"
    folder.mkdir()
    for f in files:
        (folder / f.name).write_bytes(f.read_bytes())
    t = time.perf_counter()
    niced = ["nice", "-n", str(nice)] if nice else []  # relative to this process's, as the service's graders
    subprocess.run([*niced, *CLI, "grade", str(folder), "--assignment", "pytorch-fundamentals", "--out",
                    str(root / "out"),
                    *(["--jobs", str(workers)] if workers else []), "--progress", "plain",
                    "--submission-timeout", str(timeout)],
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


# ---------------------------------------------------------------------- the burst (issue 45)
class Conn:
    """One student's (or the prober's) keep-alive connection: (status, headers, body, seconds) per request."""

    def __init__(self, srv: Server, who: str) -> None:
        import http.client

        self.http = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        self.auth = {"Authorization": f"Bearer {srv.tokens[who]}"}

    def __call__(self, method: str, path: str, body: bytes | None = None,
                 ctype: str | None = None) -> tuple[int, dict[str, str], bytes, float]:
        import http.client

        headers = {**self.auth, **({"Content-Type": ctype} if ctype else {})}
        for attempt in range(3):
            t = time.perf_counter()
            try:
                self.http.request(method, path, body=body, headers=headers)
                r = self.http.getresponse()
                data = r.read()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, data, time.perf_counter() - t
            except (http.client.HTTPException, OSError):
                self.http.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _multipart(path: Path) -> tuple[bytes, str]:
    b = "benchboundary"
    body = (f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n\r\n').encode() \
        + path.read_bytes() + f"\r\n--{b}--\r\n".encode()
    return body, f"multipart/form-data; boundary={b}"


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _pss_mb(pid: int) -> float:
    """Proportional set size: shared pages (torch's, forked from one server) split among their sharers."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def queue_floor(arrivals: list[float], durations: list[float], workers: int) -> list[float]:
    """Each student's upload-to-feedback time were the queue only the work divided by the workers: jobs in order
    of arrival, each on the first free worker, taking the time it took in this run."""
    import heapq

    free = [0.0] * workers
    out = []
    for a, d in sorted(zip(arrivals, durations, strict=True)):
        start = max(a, heapq.heappop(free))
        heapq.heappush(free, start + d)
        out.append(start + d - a)
    return out


def burst_phase(root: Path, files: list[Path], spread: float, timeout: float, grading: str = "",
                extra_pids: list[int] | None = None, follow_pace: bool = True) -> dict:
    """``len(files)`` students, each uploading one file at a moment spread evenly over ``spread`` seconds, with
    the service's default workers and queue; each retries a 503 after its Retry-After (as ``torchgrader submit
    --wait`` does) and polls every second until graded. Meanwhile a prober asks for a status, a submission
    page and the staff dashboard in turn, and a sampler reads the memory of the web process and the workers."""
    srv = Server(root, None, None, timeout=timeout, grading=grading, students=len(files))  # the class: the roster
    n = len(files)
    lock = threading.Lock()
    lat: dict[str, list[float]] = {"status": [], "page": [], "dashboard": [], "upload": []}
    refused: dict[int, int] = {}
    failed: dict[str, int] = {}  # the prober's answers other than 200
    first: dict[str, float] = {}
    graded: dict[str, float] = {}
    polls = [0]
    from autograder.service.client import _poll_interval as poll_interval
    accepted: list[str] = []
    mem: list[tuple[float, float, float]] = []
    stop = threading.Event()
    t0 = time.perf_counter() + 1.0

    def student(i: int, path: Path) -> None:
        who = f"s{i:04d}"
        conn = Conn(srv, who)
        time.sleep(max(0.0, t0 + spread * i / n - time.perf_counter()))
        start = time.perf_counter()
        body, ctype = _multipart(path)
        while True:
            code, headers, raw, secs = conn("POST", "/api/submissions", body, ctype)
            with lock:
                lat["upload"].append(secs)
            if code == 202:
                break
            assert code in (429, 503) and headers.get("retry-after"), (code, raw[:300])
            with lock:
                refused[code] = refused.get(code, 0) + 1
            time.sleep(int(headers["retry-after"]))
        sid = json.loads(raw)["id"]
        with lock:
            first[sid] = start
            accepted.append(sid)
        pace = 1.0
        while True:
            time.sleep(pace)  # the server's pace, as `torchgrader submit --wait` follows it (client._poll_interval)
            code, headers, raw, secs = conn("GET", f"/api/submissions/{sid}")
            with lock:
                lat["status"].append(secs)
                polls[0] += 1
                if code != 200:  # counted, and retried as `torchgrader submit --wait` does
                    failed[f"poll {code}"] = failed.get(f"poll {code}", 0) + 1
            if code != 200:
                time.sleep(int(headers.get("retry-after") or 1))
                continue
            reply = json.loads(raw)
            if reply["status"] in ("graded", "error"):
                break
            pace = poll_interval(reply) if follow_pace else 1.0
        with lock:
            graded[sid] = time.perf_counter()
        code, _, _, secs = conn("GET", f"/submissions/{sid}")
        with lock:
            lat["page"].append(secs)

    def prober() -> None:
        staff = Conn(srv, "staff0")
        k = 0
        while not stop.is_set():
            with lock:
                sid = accepted[-1] if accepted else None
                saturated = bool(accepted) and len(graded) < n
            if sid and saturated:
                kind, path = [("status", f"/api/submissions/{sid}"), ("page", f"/submissions/{sid}"),
                              ("dashboard", "/staff")][k % 3]
                code, _, _, secs = staff("GET", path)
                with lock:
                    if code == 200:
                        lat[kind].append(secs)
                    else:  # said in the figures, never a dead prober
                        failed[f"{kind} {code}"] = failed.get(f"{kind} {code}", 0) + 1
                k += 1
            time.sleep(0.2)

    def sampler() -> None:
        while not stop.is_set():
            workers = [p for p in _descendants(srv.proc.pid)] + [
                q for p in (extra_pids or []) for q in [p, *_descendants(p)]]
            mem.append((time.perf_counter() - t0, srv.rss_mb(), sum(_pss_mb(p) for p in workers)))
            stop.wait(2.0)

    threads = [threading.Thread(target=student, args=(i, p)) for i, p in enumerate(files)]
    side = [threading.Thread(target=prober), threading.Thread(target=sampler)]
    try:
        for th in [*side, *threads]:
            th.start()
        for th in threads:
            th.join()
    finally:
        stop.set()
        for th in side:
            th.join()
        web_cpu = srv.cpu_s()
        srv.stop()
    with srv_db(root) as db:
        per_job = db.execute("SELECT j.id, COUNT(r.id) FROM jobs j LEFT JOIN results r ON r.job = j.id "
                             "GROUP BY j.id").fetchall()
        rows = db.execute("SELECT j.submission, j.started, j.finished, r.total, r.max_total FROM jobs j "
                          "JOIN results r ON r.job = j.id").fetchall()
        slots = len({w.split(" (")[0].split(" on ")[0] for (w,) in db.execute("SELECT worker FROM jobs")})
    by_sub = {r[0]: r for r in rows}
    arrivals = [first[s] - t0 for s in accepted]
    durations = [by_sub[s][2] - by_sub[s][1] for s in accepted]
    took = [graded[s] - first[s] for s in accepted]
    workers = max(1, slots)
    floor = queue_floor(arrivals, durations, workers)
    wall = max(graded.values()) - t0
    return {"n": n, "accepted": len(accepted), "refused": refused, "graded_once": all(c == 1 for _, c in per_job)
            and len(per_job) == n, "full_marks": sum(1 for r in rows if r[3] == r[4]), "workers": workers,
            "wall": wall, "per_min": 60 * n / wall, "p50": _pct(took, 0.5), "p95": _pct(took, 0.95),
            "floor_p50": _pct(floor, 0.5), "floor_p95": _pct(floor, 0.95),
            "web": {k: (_pct(v, 0.5) * 1000, _pct(v, 0.99) * 1000, len(v)) for k, v in lat.items()},
            "web_failed": failed,
            "web_rss_mb": (mem[0][1], max(m[1] for m in mem)) if mem else (0, 0),
            "workers_pss_mb": max(m[2] for m in mem) if mem else 0.0,
            "job_s": statistics.median(durations), "polls": polls[0], "web_cpu_s": web_cpu,
            "paced": follow_pace}


class DaskCluster:
    """A local Dask scheduler and ``n`` workers (one thread each, with a nanny), each its own process tree;
    on this one machine their processes run at nice 10, as the service's own workers do."""

    def __init__(self, root: Path, n: int = 2) -> None:
        self.log = open(root / "dask.log", "ab")  # noqa: SIM115 - closed in stop()
        sched = root / "scheduler.json"
        py = [sys.executable, "-m"]
        self.procs = [subprocess.Popen([*py, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                                        "--no-dashboard", "--scheduler-file", str(sched)], stdout=self.log,
                                       stderr=self.log, start_new_session=True)]
        deadline = time.monotonic() + 60
        while not sched.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.address = json.loads(sched.read_text())["address"]
        for i in range(n):
            self.procs.append(subprocess.Popen(["nice", "-n", "10", *py, "distributed.cli.dask_worker", self.address,
                                                "--nthreads", "1", "--nanny", "--no-dashboard", "--host",
                                                "127.0.0.1", "--name", f"w{i}"], stdout=self.log, stderr=self.log,
                                               start_new_session=True))

    def stop(self) -> None:
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        self.log.close()


def _machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    return f"{len(os.sched_getaffinity(0))} cores ({cpu}), load average {os.getloadavg()[0]:.1f} at the start"


def burst_main(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT))
    from autograder.assignment import load_assignment
    from benchmarks.batch import correct_class

    out: dict = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": _machine()}
    with tempfile.TemporaryDirectory(prefix="tg-bench-burst-") as tmp:
        root = Path(tmp)
        files = correct_class(load_assignment("pytorch-fundamentals", ROOT), args.students, root / "files")
        from autograder.service.config import ServiceConfig

        nice = ServiceConfig().nice
        b = batch_phase(root, files, None, args.submission_timeout, nice)
        out["batch"] = b
        print(f"batch (`torchgrader grade`, one worker per core, {nice} steps of nice below this process as the "
              "service's graders, "
              f"{len(files)} distinct correct notebooks): {b['per_min']:.1f} graded/min", flush=True)
        backends = ["process", "dask"] if args.dask else ["process"]
        for name in backends:
            (root / name).mkdir()
            cluster = DaskCluster(root / name) if name == "dask" else None
            grading = f'backend = "dask"\nscheduler = "{cluster.address}"\n' if cluster else ""
            try:
                r = burst_phase(root / name, files, args.spread, args.submission_timeout, grading,
                                [p.pid for p in cluster.procs[1:]] if cluster else None,
                                follow_pace=not args.poll_every_second)
            finally:
                if cluster:
                    cluster.stop()
            out[name] = r
            _say_burst(name, r, b)
    print(f"machine: {out['machine']}; load average {os.getloadavg()[0]:.1f} at the end")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def _say_burst(name: str, r: dict, b: dict) -> None:
    refused = ", ".join(f"{n} x {c}" for c, n in sorted(r["refused"].items())) or "none"
    web = "; ".join(f"{k} p50 {p50:.0f} ms, p99 {p99:.0f} ms (n={n})" for k, (p50, p99, n) in r["web"].items())
    print(f"burst on {name} ({r['workers']} workers): {r['n']} students over the spread, {r['accepted']} accepted; "
          f"refused on the way (then retried after Retry-After): {refused}; graded exactly once: {r['graded_once']}; "
          f"full marks {r['full_marks']}/{r['n']}\n"
          f"  {r['per_min']:.1f} graded/min = {r['per_min'] / b['per_min']:.2f}x the batch's; "
          f"upload to feedback p50 {r['p50']:.0f} s, p95 {r['p95']:.0f} s against the queue's floor p50 "
          f"{r['floor_p50']:.0f} s, p95 {r['floor_p95']:.0f} s (p95 {r['p95'] / r['floor_p95']:.2f}x); median job "
          f"{r['job_s']:.2f} s\n  web during saturation: {web}; not 200: {r['web_failed'] or 'none'}\n"
          f"  status polls {r['polls']} ({'at the pace the server asks' if r['paced'] else 'every second'}); the "
          f"web process's own CPU {r['web_cpu_s']:.0f} s over {r['wall']:.0f} s\n"
          f"  memory: web process RSS {r['web_rss_mb'][0]:.0f} MB at the start, {r['web_rss_mb'][1]:.0f} MB at most; "
          f"workers (with their sandbox servers) {r['workers_pss_mb']:.0f} MB PSS at most", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-n", type=int, default=1000)
    ap.add_argument("--lone-n", type=int, default=6, help="correct notebooks a lone student submits one by one")
    ap.add_argument("--submission-timeout", type=float, default=120.0,
                    help="seconds per submission, the same for both (dave.py walks the file system until stopped)")
    ap.add_argument("--burst", action="store_true",
                    help="the last hour: --students (default 300) each submit once within --spread seconds to the "
                         "service's default workers, beside the batch on the same files")
    ap.add_argument("--spread", type=float, default=60.0, help="burst: seconds over which the students arrive")
    ap.add_argument("--poll-every-second", action="store_true",
                    help="burst: students poll every second, whatever pace the server asks for (poll_s)")
    ap.add_argument("--dask", action="store_true", help="burst: again on a local Dask cluster (two workers)")
    ap.add_argument("--json", help="burst: also write the figures to this file")
    args = ap.parse_args()
    if args.burst:
        if "--students" not in sys.argv:
            args.students = 300
        burst_main(args)
        return
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
