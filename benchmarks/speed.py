"""How fast grading is from cold and at scale, measured side by side in one run (issue 13).

Prints, each with its ratio to what it is compared with in the same run:

1. ``import torch`` in a fresh interpreter (the yardstick of everything cold);
2. cold single submission: ``torchgrader grade`` of one sample, full
   assignment, report included, with the CPU the whole machine was busy for
   (/proc/stat): spread over every core with no idle instant, the least that
   run could take; one exercise only; and the compile exercise's own chain,
   the least any cold run that grades it waits for, however many cores
   (CHAIN_SCRIPT);
3. check latency: ``torchgrader check`` (one exercise), and in a fresh Python
   process that has imported torch as a notebook kernel would, the first
   ``check()`` and the later ones (a warm server per kernel);
4. batch throughput with ``--jobs``, worker start-up included, for two classes side
   by side: N copies of the samples (the mix) and CORRECT_N distinct correct
   submissions (combinations of references and alternatives), each against its
   floor (the same checks in one warm process, no isolation; timed before and
   after the batch, whose ratio to each is printed too) and the load, in
   wall time and in CPU seconds per submission (the whole machine's, from
   /proc/stat: steady under noisy neighbours), with the idle and stolen shares;
5. at scale: BIG submissions (copies of the samples plus broken files) graded
   by the real command; killed at 90 %, then rerun: per-submission time of the
   first hundred against the last hundred before the kill, peak memory (RSS)
   of each judge and sandbox server when the first hundred are done and at
   the kill, what the rerun grades and how long it takes, and a third run
   with nothing left to grade (gradebook, feedback pages, class report).

    python benchmarks/speed.py [--batch-n 100] [--correct-n 80] [--big-n 1000] [--big-exercise ID ...]
                               [--jobs 2] [--skip-batch] [--skip-big]

Timing is never asserted in the tests; the behaviours behind these figures are.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHECK_SCRIPT = r"""
import json, sys, time, io, contextlib
t0 = time.perf_counter()
import torch  # a notebook kernel has imported torch before it checks
t_torch = time.perf_counter() - t0
from autograder import check
times = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        check(sys.argv[1], notebook=sys.argv[2], course=sys.argv[4])
    times.append(time.perf_counter() - t)
    assert "public tests pass" in out.getvalue(), out.getvalue()
print(json.dumps({"torch": t_torch, "checks": times}))
"""

# The compile exercise's own chain, in one fresh interpreter, without a judge or a sandbox: what the sandbox
# server imports before it says it is ready (the collector paused, as it does), torch._dynamo, then the
# compiles that exercise's probes make (a full-graph capture with a backend of their own; aot_eager with
# dynamic shapes, called again at another size under "fail_on_recompile"), each with the server's own
# warm-up code. A cold run that grades the exercise does all of it one step after the other in the
# sandbox's line of processes (server, then sandbox), so it cannot end sooner than this chain.
CHAIN_SCRIPT = r"""
import json, os, sys, time
t0 = time.perf_counter()
from autograder import gcpause
from autograder.sandbox import server
gcpause.pause()
server._preload()
gcpause.resume()
t1 = time.perf_counter()
with gcpause.paused():
    server._import_all(server.COMPILER_PRELOAD)
t2 = time.perf_counter()
for how in server.WARM_COMPILES:
    if how.get("inference"):  # the probes' ways: own backend, full graph; aot_eager, dynamic
        server._compile_tiny(how)
t3 = time.perf_counter()
print(json.dumps({"preload": t1 - t0, "dynamo": t2 - t1, "compiles": t3 - t2}), flush=True)
os._exit(0)  # as the server, which never tears down
"""

BROKEN = {
    "corrupt.ipynb": '{"cells": [ {"cell_type": "code", "sou',  # a truncated download
    "syntax.py": "import torch\n\ndef softmax_grad(x)\n    return x\n",
    "empty.py": "",
}


def uptime() -> str:
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def kernel_threads() -> dict[str, float]:
    """CPU seconds so far of each of the kernel's own threads (children of kthreadd), by name.

    Some VMs run memory daemons (DAMON's kdamond, khugepaged, kswapd) that take a few per cent of the
    machine while a batch forks sandboxes: that time counts in ``busy`` and takes cores from the batch,
    and a floor that runs on one core leaves it the other. kworkers are summed under one name.
    """
    tck = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            name, rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        fields = rest.split()
        if fields[1] != "2":  # ppid: kthreadd's children only
            continue
        comm = name.split("(", 1)[1]
        key = "kworker" if comm.startswith("kworker") else comm
        out[key] = out.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / tck
    return out


@dataclass(frozen=True)
class Cpu:
    """The whole machine's CPU seconds so far (``/proc/stat``): what it ran, what it waited, what the host took.

    Differences of two samples say how a phase used the machine: ``busy`` counts every process of
    the benchmark (judges, sandbox servers, sandboxes, the floor's one process) whatever the wall
    clock did, and the kernel's own threads too (``kernel``, by name); ``steal`` is time the VM's
    host gave to other guests. On a shared VM the wall clock moves with the neighbours; busy seconds
    per submission move much less.
    """

    busy: float = 0.0
    idle: float = 0.0
    steal: float = 0.0
    kernel: tuple[tuple[str, float], ...] = ()

    @classmethod
    def now(cls) -> Cpu:
        try:
            fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        except OSError:
            return cls()
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) / os.sysconf("SC_CLK_TCK")
                                                                 for x in (fields + ["0"] * 8)[:8])
        return cls(busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal,
                   kernel=tuple(sorted(kernel_threads().items())))

    def __sub__(self, other: Cpu) -> Cpu:
        before = dict(other.kernel)
        kernel = tuple((k, v - before.get(k, 0.0)) for k, v in self.kernel)
        return Cpu(self.busy - other.busy, self.idle - other.idle, self.steal - other.steal, kernel)

    def shares(self) -> str:
        """Idle, stolen and kernel-thread shares of all cores' time over the phase (the largest thread named)."""
        total = self.busy + self.idle + self.steal
        if total <= 0:
            return "idle ?, steal ?"
        shares = f"idle {100 * self.idle / total:.0f} %, steal {100 * self.steal / total:.0f} %"
        if not self.kernel:  # no kernel thread visible (a container's own PID namespace)
            return shares
        threads = sorted(((max(v, 0.0), k) for k, v in self.kernel), reverse=True)
        top = f" ({threads[0][1]} {100 * threads[0][0] / total:.0f} %)" if threads[0][0] > 0 else ""
        return f"{shares}, kernel threads {100 * sum(v for v, _ in threads) / total:.0f} %{top}"


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kw)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return took, done


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "autograder.cli", *args]


def import_torch(runs: int = 3) -> float:
    return statistics.median(timed([sys.executable, "-c", "import torch"])[0] for _ in range(runs))


# ---------------------------------------------------------------------- 2. cold single submission
def cold_single(args, tmp: Path, sample: Path, exercise: str | None) -> tuple[float, Cpu]:
    out = tmp / f"cold-{exercise or 'all'}-{time.monotonic_ns()}"
    cmd = cli(
        "grade",
        str(sample),
        "--assignment",
        args.assignment,
        "--course",
        args.course,
        "--out",
        str(out),
        "--progress",
        "plain",
        *(["--exercise", exercise] if exercise else []),
    )
    c0 = Cpu.now()
    took, done = timed(cmd)
    used = Cpu.now() - c0
    if not (out / "report.html").is_file() or "1 graded now" not in done.stdout:
        raise SystemExit(f"cold grading did not produce a report:\n{done.stdout}\n{done.stderr[-2000:]}")
    return took, used


def compile_chain() -> tuple[float, dict[str, float]]:
    """:data:`CHAIN_SCRIPT` in a fresh interpreter: its wall time (start-up included) and its steps."""
    took, done = timed([sys.executable, "-c", CHAIN_SCRIPT])
    return took, json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- 3. check latency
def check_latency(args, sample: Path) -> tuple[list[float], float, list[float]]:
    """`torchgrader check` three times (its median is compared with import torch's), then a kernel's checks."""
    runs = [check_cli(args, sample) for _ in range(3)]
    _, run = timed([sys.executable, "-c", CHECK_SCRIPT, args.check_exercise, str(sample), "4", args.course])
    got = json.loads(run.stdout.strip().splitlines()[-1])
    return runs, got["torch"], got["checks"]


def check_cli(args, sample: Path) -> float:
    cli_s, done = timed(
        cli(
            "check",
            str(sample),
            "--assignment",
            args.assignment,
            "--course",
            args.course,
            "--exercise",
            args.check_exercise,
        )
    )
    if "public tests pass" not in done.stdout:
        raise SystemExit(f"torchgrader check failed:\n{done.stdout}\n{done.stderr[-2000:]}")
    return cli_s


# ---------------------------------------------------------------------- 5. at scale
def processes_of(root_pid: int) -> dict[str, list[int]]:
    """The batch's judges (workers) and sandbox servers below ``root_pid``."""
    children: dict[int, list[int]] = {}
    cmdlines: dict[int, str] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmdlines[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    found: dict[str, list[int]] = {"judge": [], "server": []}
    todo = [root_pid]
    while todo:
        pid = todo.pop()
        for c in children.get(pid, []):
            cmd = cmdlines.get(c, "")
            if "autograder.batch.backends.worker" in cmd:
                found["judge"].append(c)
                todo.append(c)
            elif "autograder.sandbox.server" in cmd and pid == root_pid:
                found["server"].append(c)  # its children are sandboxes (not counted) and forked judges' waiters
                for waiter in children.get(c, []):
                    found["judge"] += [j for j in children.get(waiter, []) if _comm(j) == "tg-judge"]
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def rss_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) in MiB."""
    cur = peak = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return cur, peak


def committed(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("SELECT COUNT(*) FROM gradings").fetchone()[0]
    except sqlite3.Error:
        return 0


def memory_line(pids: dict[str, list[int]]) -> str:
    parts = []
    for kind in ("judge", "server"):
        vals = [rss_mib(p) for p in sorted(pids[kind])]
        parts.append(f"{kind}s " + ", ".join(f"{cur:.0f} MiB (peak {peak:.0f})" for cur, peak in vals))
    return "; ".join(parts)


def at_scale(args, sources: list[Path], tmp: Path) -> None:
    from benchmarks.batch import class_of

    broken = []
    for name, text in BROKEN.items():
        p = tmp / "broken" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        broken.append(p)
    folder = tmp / "big"
    class_of(sources + broken, args.big_n, folder)
    out = tmp / "big-out"
    cmd = cli(
        "grade",
        str(folder),
        "--assignment",
        args.assignment,
        "--course",
        args.course,
        "--out",
        str(out),
        "--jobs",
        str(args.jobs),
        "--progress",
        "plain",
        *[a for e in args.big_exercise or [] for a in ("--exercise", e)],
    )
    db = out / "grades.sqlite"
    kill_at = int(0.9 * args.big_n)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start_mem = end_mem = ""
    pids: dict[str, list[int]] = {"judge": [], "server": []}
    while proc.poll() is None:
        time.sleep(0.25)
        n = committed(db)
        found = processes_of(proc.pid)
        if found["judge"]:
            pids = found
        if not start_mem and n >= min(100, args.big_n // 2):
            start_mem = memory_line(pids)
        if n >= kill_at:
            end_mem = memory_line(pids)
            proc.send_signal(signal.SIGKILL)  # its workers die with it
            proc.wait()
            break
    first_run = time.perf_counter() - t0
    if not end_mem:
        raise SystemExit(f"the big batch ended before it could be killed at {kill_at} (exit {proc.returncode})")
    killed_at = committed(db)
    time.sleep(2)
    t1 = time.perf_counter()
    rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    rerun_s = time.perf_counter() - t1
    m = re.search(r"(\d+) to grade, (\d+) already graded", rerun.stdout)
    t2 = time.perf_counter()
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    outputs_s = time.perf_counter() - t2
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT run_id, graded_at, seconds FROM gradings ORDER BY id").fetchall()
        twice = c.execute(
            "SELECT COUNT(*) FROM (SELECT student FROM gradings GROUP BY student HAVING COUNT(*) > 1)"
        ).fetchone()[0]
    first = [r for r in rows if r[0] == rows[0][0]]
    stamps = [r[1] for r in first]
    k = min(100, len(first) // 2)  # a hundred at the default size
    head, tail = first[:k], first[-k:]
    wall_head = (stamps[k - 1] - stamps[0]) / (k - 1)
    wall_tail = (stamps[-1] - stamps[-k]) / (k - 1)
    mean_head = statistics.mean(r[2] for r in head)
    mean_tail = statistics.mean(r[2] for r in tail)
    what = f"exercises {', '.join(args.big_exercise)}" if args.big_exercise else "the whole assignment"
    print(
        f"5. at scale: {args.big_n} submissions ({len(sources)} samples and {len(broken)} broken files, cycled), "
        f"{what}, --jobs {args.jobs}; {uptime()}"
    )
    print(
        f"   killed at {killed_at} graded ({first_run:.0f} s); per submission, first {k} vs last {k} before the "
        f"kill: wall {wall_head:.2f} s vs {wall_tail:.2f} s ({wall_tail / wall_head:.2f}x), worker-side mean "
        f"{mean_head:.2f} s vs {mean_tail:.2f} s ({mean_tail / mean_head:.2f}x)"
    )
    print(f"   memory after the first {min(100, args.big_n // 2)}: {start_mem}")
    print(f"   memory at the kill ({killed_at}):   {end_mem}")
    if m:
        print(
            f"   rerun after the kill: {m.group(1)} to grade, {m.group(2)} already graded, {rerun_s:.1f} s "
            f"(exit {rerun.returncode}); students graded twice: {twice}"
        )
    else:
        print(f"   rerun after the kill failed (exit {rerun.returncode}): {rerun.stdout[-500:]} {rerun.stderr[-500:]}")
    print(
        f"   third run, nothing to grade (gradebook, {args.big_n} feedback pages, class report): {outputs_s:.1f} s "
        f"(exit {again.returncode})"
    )


# ---------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assignment", default="pytorch-fundamentals")
    ap.add_argument("--course", default=str(ROOT))
    ap.add_argument("--sample", default=str(ROOT / "samples" / "alice.ipynb"), help="the cold single submission")
    ap.add_argument("--exercise", default="softmax_grad", help="the one exercise of the cold one-exercise run")
    ap.add_argument("--check-exercise", default="softmax_grad", help="the exercise checked for check latency")
    ap.add_argument("--batch-n", type=int, default=100)
    ap.add_argument("--correct-n", type=int, default=80, help="distinct correct submissions in the second class")
    ap.add_argument("--floor-n", type=int, default=20)
    ap.add_argument("--big-n", type=int, default=1000)
    ap.add_argument(
        "--big-exercise",
        action="append",
        help="grade only these exercises in the big run (repeatable; default: the whole assignment)",
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-batch", action="store_true")
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args()
    args.course = str(Path(args.course).resolve())
    sample = Path(args.sample).resolve()

    print(
        f"torchgrader speed, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}: {os.cpu_count()} cores, "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; {uptime()}"
    )
    torch_s = import_torch()
    print(f"1. import torch (fresh interpreter, median of 3): {torch_s:.2f} s")
    with tempfile.TemporaryDirectory(prefix="torchgrader-speed-") as tmp_name:
        tmp = Path(tmp_name)
        full_runs = [cold_single(args, tmp, sample, None) for _ in range(2)]
        one = [cold_single(args, tmp, sample, args.exercise)[0] for _ in range(2)]
        chains = [compile_chain() for _ in range(2)]
        full = [took for took, _ in full_runs]
        fastest_used = min(full_runs, key=lambda run: run[0])[1]
        cores = os.cpu_count() or 1
        chain_s, steps = min(chains, key=lambda c: c[0])
        print(
            f"2. cold single submission ({sample.name}), `torchgrader grade`, report included; {uptime()}\n"
            f"   full assignment: {min(full):.2f} s (runs: {', '.join(f'{x:.2f}' for x in full)}) = "
            f"{min(full) / torch_s:.2f}x import torch\n"
            f"   its CPU (the whole machine's): {fastest_used.busy:.2f} core-s busy ({fastest_used.shares()}); "
            f"spread over the {cores} cores with no idle instant, {fastest_used.busy / cores:.2f} s = "
            f"{fastest_used.busy / (cores * torch_s):.2f}x import torch: the least this run could take here\n"
            f"   one exercise ({args.exercise}): {min(one):.2f} s = {min(one) / torch_s:.1f}x import torch\n"
            f"   the compile exercise's own chain (server's imports, torch._dynamo, the probes' compiles; "
            f"one process, no judge): {chain_s:.2f} s = {chain_s / torch_s:.2f}x import torch "
            f"(runs: {', '.join(f'{c[0]:.2f}' for c in chains)}; steps "
            f"{', '.join(f'{k} {v:.2f} s' for k, v in steps.items())})"
        )

        cli_runs, kernel_torch, checks = check_latency(args, sample)
        cli_s = statistics.median(cli_runs)
        later = statistics.median(checks[1:]) if len(checks) > 1 else float("nan")
        print(
            f"3. check latency ({args.check_exercise}); {uptime()}\n"
            f"   `torchgrader check`, median of 3: {cli_s:.2f} s (runs: {', '.join(f'{x:.2f}' for x in cli_runs)}) = "
            f"{cli_s / torch_s:.1f}x import torch\n"
            f"   in a fresh kernel (torch imported in {kernel_torch:.2f} s): first check() {checks[0]:.2f} s = "
            f"{checks[0] / torch_s:.1f}x import torch; later ones median {later:.2f} s "
            f"({', '.join(f'{x:.2f}' for x in checks[1:])})"
        )

        from autograder.assignment import load_assignment
        from benchmarks.batch import samples

        assignment = load_assignment(args.assignment, Path(args.course))
        sources = samples(assignment, tmp / "samples", None)
        if not args.skip_batch:
            batch_throughput(args, assignment, sources, tmp)
        if not args.skip_big:
            at_scale(args, sources, tmp)


def batch_throughput(args, assignment, sources: list[Path], tmp: Path) -> None:
    """Two classes side by side: the samples mix (copies of samples/, a fifth unreadable, a fifth scoring 0 in
    half a second) and correct-only (distinct combinations of references and alternatives: every test
    passes, every compile and rank check runs), each against its own floor measured in this run."""
    from benchmarks.batch import class_of, correct_class

    print(f"4. batch throughput, {len(assignment.exercises)} exercises, --jobs {args.jobs}, start-up included")
    mix = class_of(sources, args.batch_n, tmp / "class-mix")
    _one_class(args, assignment, "samples mix", f"{len(sources)} samples cycled", mix, tmp / "out-mix")
    correct = correct_class(assignment, args.correct_n, tmp / "class-correct")
    _one_class(args, assignment, "correct only", "distinct references and alternatives", correct,
               tmp / "out-correct", full_marks=True)


def _one_class(args, assignment, label: str, what: str, paths: list[Path], out: Path, *,
               full_marks: bool = False) -> None:
    from autograder.batch.backends.config import WorkerConfig
    from autograder.batch.runner import BatchOptions, grade_batch
    from autograder.grade import GradeOptions

    cfg = WorkerConfig(course=str(assignment.course), assignment=assignment.id, options=GradeOptions())
    opts = BatchOptions(out=out, worker=cfg, jobs=args.jobs, progress="plain", report=True)
    load = uptime()
    # The floor is timed before the batch and again after it: this VM's speed drifts by more than the
    # differences measured here, and a floor on one side only would carry the drift into the ratio.
    floors = [_floor(assignment, paths[: args.floor_n])]
    with open(out.with_suffix(".log"), "w") as log:
        c0, t0 = Cpu.now(), time.perf_counter()
        summary = grade_batch(assignment, [paths[0].parent], opts, stream=log, err=log)
        wall, batch_cpu = time.perf_counter() - t0, Cpu.now() - c0
    floors.append(_floor(assignment, paths[: args.floor_n]))
    rate = 60 * len(paths) / wall
    per = [r.seconds for r in summary.results]
    each = [statistics.mean(f.seconds) for f in floors]
    mean_floor = statistics.mean(each)
    floor_busy = statistics.mean(f.own_cpu for f in floors)
    batch_busy = batch_cpu.busy / len(paths)
    batch_totals = {Path(r.path).name: r.total for r in summary.results}
    differ = {r.path for f in floors for r in f.results if batch_totals.get(Path(r.path).name) != r.total}
    floor_rate = 60 / mean_floor
    two_core = args.jobs * floor_rate
    ratios = sorted(rate / (args.jobs * 60 / e) for e in each)
    lost = [Path(r.path).name for r in summary.results if r.total < r.max_total]
    print(
        f"   {label} ({len(paths)} submissions, {what}); {load} at the start\n"
        f"     batch: {wall:.1f} s wall, {rate:.0f} submissions/min; per submission median "
        f"{statistics.median(per):.2f} s (worker side)\n"
        f"     floor (one warm process, no isolation, {len(floors[0].seconds)} of them), timed before and after "
        f"the batch: {each[0]:.2f} and {each[1]:.2f} s each (mean {mean_floor:.2f} s), "
        f"{floor_rate:.0f}/min on one core, {two_core:.0f}/min on {args.jobs}\n"
        f"     batch / {args.jobs}-core floor = {rate / two_core:.2f}x ({ratios[0]:.2f}x-{ratios[1]:.2f}x against "
        f"each floor); per-submission median / floor median = "
        f"{statistics.median(per) / statistics.median(floors[0].seconds + floors[1].seconds):.2f}x; "
        f"{uptime()} at the end\n"
        f"     CPU time of the whole machine (/proc/stat), start-up included: batch {batch_busy:.2f} s per "
        f"submission, floor {floor_busy:.2f} s (its process, warm; mean of both); floor / batch = "
        f"{floor_busy / batch_busy:.2f}x; over the batch {batch_cpu.shares()}, over the later floor "
        f"{floors[1].machine.shares()} (of {os.cpu_count()} cores)\n"
        f"     same scores in both floors and the batch: {'yes' if not differ else f'NO ({len(differ)} differ)'}"
        + (f"; full marks for all: {'yes' if not lost else f'NO ({len(lost)}: {lost[:3]})'}" if full_marks else "")
    )


@dataclass
class _FloorRun:
    results: list
    seconds: list[float]
    own_cpu: float  # its process's CPU per measured submission (not its warm-up)
    machine: Cpu


def _floor(assignment, paths: list[Path]) -> _FloorRun:
    from benchmarks.batch import floor

    c0, own = Cpu.now(), []
    results = floor(assignment, paths, None, cpu=own)
    return _FloorRun(results, [r.seconds for r in results], own[0] / len(results), Cpu.now() - c0)


if __name__ == "__main__":
    main()
