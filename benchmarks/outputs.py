"""How long a batch takes when nothing is left to grade: the gradebook, every feedback page, the class report.

A TA reruns the command after an interruption or to get the outputs again; each result comes from the
store, so the time is all reading, reviewing and writing. The class is N copies of the samples (as
``speed.py``'s run at scale has, so nearly everyone is flagged as a duplicate), but only the samples are
graded: the other students' results are stored as the samples' own (same bytes, same key), in minutes
fewer than grading N. Prints the median of ``--runs`` reruns and the time per student.

    python benchmarks/outputs.py [--n 1000] [--runs 3] [--assignment pytorch-fundamentals]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.batch import class_of  # noqa: E402 - after the path is set
from benchmarks.speed import cli, timed  # noqa: E402


def stored_class(n: int, assignment: str, tmp: Path) -> tuple[Path, Path]:
    """A folder of n submissions and an --out whose store holds a result for each (the samples graded once)."""
    from autograder.batch.store import DB_NAME, Store

    samples = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
    out = tmp / "out"
    timed(cli("grade", str(ROOT / "samples"), "--assignment", assignment, "--out", str(out), "--progress", "plain"))
    folder = tmp / "class"
    paths = class_of(samples, n, folder)
    with Store(out / DB_NAME) as store:
        (version,) = {v for (v,) in store.db.execute("SELECT suite_version FROM results")}
        by_sha = {}
        for p in samples:
            sha = hashlib.sha256(p.read_bytes()).hexdigest()
            by_sha[sha] = store.get(assignment, p.stem, sha, version)
        for p in paths:
            r = by_sha[hashlib.sha256(p.read_bytes()).hexdigest()]
            if r is not None:
                r.student, r.submission, r.path = p.stem, p.stem, str(p)
                store.put(r, version)
    return folder, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--assignment", default="pytorch-fundamentals")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tg-outputs-") as t:
        folder, out = stored_class(args.n, args.assignment, Path(t))
        cmd = cli("grade", str(folder), "--assignment", args.assignment, "--out", str(out), "--progress", "plain")
        times = []
        for _ in range(args.runs):
            took, done = timed(cmd)
            if f"0 to grade, {args.n} already graded" not in done.stdout:
                raise SystemExit(f"the rerun graded something (the store lacks a result):\n{done.stdout[-2000:]}")
            times.append(took)
        med = statistics.median(times)
        print(f"nothing to grade, {args.n} students (gradebook, {args.n} feedback pages, class report): "
              f"median {med:.1f} s of {args.runs} ({', '.join(f'{x:.1f}' for x in times)}), "
              f"{1000 * med / args.n:.0f} ms per student")


if __name__ == "__main__":
    main()
