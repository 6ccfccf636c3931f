"""Per-submission harness overhead in a warm batch, against a cold `import torch`.

Grades N copies of a submission whose functions return instantly (the demo
assignment: 2 exercises, 5 tests, about 20 sandbox round trips each), so the
time per submission is nearly all harness: spawning an isolated sandbox,
running the cells, the round trips, pytest's per-test protocol, teardown.
In the same run it times `python -c "import torch"`, what a grader that starts
a fresh process per submission pays before doing anything.

    python benchmarks/overhead.py [-n 50]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import load_assignment  # noqa: E402
from autograder.grade import grade  # noqa: E402
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer  # noqa: E402

COURSE = ROOT / "tests" / "course"
INSTANT = """
import torch

def double(x):
    return x * 2

def row_means(x):
    return x.mean(dim=1)

class Counter:
    def __init__(self, start=0):
        self.total = start

    def add(self, n):
        self.total += n
        return self.total
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=50, help="submissions in the batch")
    args = ap.parse_args()

    cold = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        cold.append(time.perf_counter() - t0)

    assignment = load_assignment("demo", COURSE)
    with tempfile.TemporaryDirectory() as tmp, SandboxServer() as server:
        spawn = []
        for _ in range(20):
            t0 = time.perf_counter()
            sb = Sandbox(server, SandboxConfig())
            sb.request("ping", timeout=10)
            spawn.append(time.perf_counter() - t0)
            sb.kill()
        paths = []
        for i in range(args.n):
            p = Path(tmp) / f"s{i:04d}.py"
            p.write_text(INSTANT)
            paths.append(p)
        grade(assignment, paths[:2], server=server)  # warm the judge (pytest, imports)
        per = []
        t0 = time.perf_counter()
        results = grade(assignment, paths, server=server, on_result=lambda r: per.append(r.seconds))
        total = time.perf_counter() - t0
    assert all(r.total == r.max_total for r in results), "the instant submission should earn full marks"

    med_cold = statistics.median(cold)
    per_sub = total / args.n
    print(f"cold `python -c 'import torch'`:        median {med_cold:.3f} s (3 runs)")
    print(
        f"isolated sandbox spawn + first reply:   median {statistics.median(spawn) * 1000:.0f} ms, "
        f"max {max(spawn) * 1000:.0f} ms (20 spawns)"
    )
    print(
        f"warm batch of {args.n} submissions:          {total:.2f} s in all, {per_sub * 1000:.0f} ms per "
        f"submission (median {statistics.median(per) * 1000:.0f} ms, "
        f"p95 {sorted(per)[int(0.95 * (len(per) - 1))] * 1000:.0f} ms)"
    )
    print(f"ratio cold import torch / per-submission harness: {med_cold / per_sub:.1f}x")


if __name__ == "__main__":
    main()
