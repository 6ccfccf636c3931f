"""Batch throughput: N copies of the sample submissions, graded by warm isolated workers.

Prints submissions per minute (wall clock, worker start-up included, and
steady state), the per-submission median and p95 (worker side), and the
ratio to the floor: the same hidden checks run in one warm process without
any isolation (student code in a thread of the judge process, no sandbox
process, no namespaces), which is what grading costs when nothing is
isolated. The samples are ``samples/*.ipynb|*.py`` when there are any;
otherwise the assignment's reference and, in turn, one mutant per exercise
(a class where most students lose a few points somewhere).

    python benchmarks/batch.py [-n 100] [--jobs 2] [--assignment pytorch-fundamentals] [--exercise ID ...]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import Assignment, load_assignment  # noqa: E402
from autograder.batch.backends.config import WorkerConfig  # noqa: E402
from autograder.batch.runner import BatchOptions, grade_batch  # noqa: E402
from autograder.grade import GradeOptions  # noqa: E402


def samples(assignment: Assignment, folder: Path, exercises: list[str] | None) -> list[Path]:
    found = sorted(p for p in (ROOT / "samples").glob("*") if p.suffix in (".ipynb", ".py"))
    if found:
        return found
    from autograder.authoring.cases import compose

    out = [compose(assignment, {}, folder / "reference.py")]
    chosen = [assignment.exercise(e) for e in exercises] if exercises else assignment.exercises
    for ex in chosen:
        for m in ex.mutants()[:2]:
            out.append(compose(assignment, {ex.id: m}, folder / f"mutant--{ex.id}--{m.stem}.py"))
    return out


def correct_class(assignment: Assignment, n: int, dest: Path, seed: int = 0) -> list[Path]:
    """``n`` distinct correct submissions: per exercise the reference or one of its alternatives, combined.

    Correct notebooks are the common case a TA regrades and a student waits on; copies of one file would
    flatter any cache keyed on content. Each submission is a distinct combination (drawn with ``seed``).
    """
    import random

    from autograder.authoring.cases import compose

    options = [[None, *ex.alternatives()] for ex in assignment.exercises]
    room = 1
    for o in options:
        room *= len(o)
    if n > room:
        raise SystemExit(f"{assignment.id} has only {room} distinct correct combinations; ask for fewer")
    rng = random.Random(seed)
    seen: set[tuple[int, ...]] = set()
    paths = []
    dest.mkdir(parents=True, exist_ok=True)
    while len(paths) < n:
        pick = tuple(rng.randrange(len(o)) for o in options)
        if pick in seen:
            continue
        seen.add(pick)
        swap = {ex.id: o[i] for ex, o, i in zip(assignment.exercises, options, pick, strict=True) if o[i]}
        path = compose(assignment, swap, dest / f"correct{len(paths):04d}.py")
        if _helpers_collide(path.read_text()):
            continue  # one namespace, as in a notebook: a later exercise's helper would replace an earlier one's
        paths.append(path)
    return paths


def _helpers_collide(source: str) -> bool:
    """Whether two exercises' cells of a composed submission define the same top-level function or class.

    A notebook's cells share one namespace: two alternatives that each define a helper ``_one`` would make
    the earlier exercise call the later one's, and a correct class would not be correct.
    """
    import ast

    owner: dict[str, int] = {}
    for n, chunk in enumerate(source.split("# %% [")):
        for node in ast.parse(chunk.partition("\n")[2] if n else chunk).body:
            defines = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            if defines and owner.setdefault(node.name, n) != n:
                return True
    return False


def class_of(sources: list[Path], n: int, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, src in zip(range(n), itertools.cycle(sources), strict=False):
        p = dest / f"student{i:04d}{src.suffix}"
        shutil.copyfile(src, p)
        paths.append(p)
    return paths


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


# ---------------------------------------------------------------------- the floor
def floor(assignment: Assignment, paths: list[Path], exercises: list[str] | None,
          cpu: list[float] | None = None) -> list:
    """Per-submission seconds with no isolation at all: the sandbox runtime serves from a thread, in process.

    ``cpu``, when given, receives this process's CPU seconds (every thread) over the measured submissions.
    """
    import torch

    import autograder.sandbox.client
    import autograder.sandbox.runtime
    import autograder.session
    from autograder.grade import GradeOptions, grade
    from autograder.sandbox.client import Sandbox
    from autograder.sandbox.runtime import Runtime

    # In a real sandbox the runtime hides the grader's modules from student code; here the "sandbox" is a
    # thread of the judge, which still imports its own modules as it goes.
    autograder.sandbox.runtime._hide_grader = lambda helpers: None

    class InProcessSandbox(Sandbox):
        def __init__(self, server, config, start_timeout: float = 60.0) -> None:  # noqa: ARG002
            self.config = config
            self._ids = itertools.count(1)
            self._output = bytearray()
            self.output_truncated = False
            self.pid = -1
            self._oom_file = None  # no cgroup: nothing is limited here
            self.memory_limit = config.limits.memory_bytes
            self._oom_counter = None
            self._ooms = 0
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock = ours
            self.alive = True
            self.protections = {"isolation": "NOT isolated: benchmark floor, student code in the judge process"}
            self._runtime = threading.Thread(target=Runtime(theirs).serve, daemon=True)
            self._runtime.start()

        def kill(self) -> None:
            self.alive = False
            try:
                self.sock.close()
            except OSError:
                pass

    class NoServer:
        """Stands for the sandbox server: sandboxes are threads of this process here."""

        def warm_later(self, only: list[str] | None = None) -> None:
            pass

        def wait_ready(self) -> None:
            pass

    import torch._dynamo  # noqa: F401 - imported now, so that the sandboxes' compiler set-up applies here too

    from autograder.sandbox.compiler import skip_guard_profiling

    skip_guard_profiling()  # as the sandbox server does before its first sandbox: the same checks
    main = sys.modules["__main__"]
    saved = autograder.session.Sandbox
    torch.set_num_threads(1)  # as in the sandbox
    # the session's sandboxes, and the clean ones the judge starts itself (a checkpoint resumed where no
    # student code ran): both take Sandbox from these two modules
    autograder.session.Sandbox = autograder.sandbox.client.Sandbox = InProcessSandbox
    here = os.getcwd()
    scratch = tempfile.mkdtemp(prefix="tg-floor-")
    os.chdir(scratch)  # a sandbox's working folder is its private scratch: probes write checkpoints there
    undo = _Undo()
    close = autograder.session.Session.close

    def close_and_undo(session, wait_output: float = 0.0) -> None:  # what one student's code rebound must
        close(session, wait_output)  # not grade the next one
        undo()

    autograder.session.Session.close = close_and_undo
    try:
        opts = GradeOptions(exercises=exercises)
        paths = [Path(p).resolve() for p in paths]
        grade(assignment, paths[:2], options=opts, server=NoServer())  # warm: imports, first compilations
        c0, undone = time.process_time(), undo.seconds
        results = grade(assignment, paths, options=opts, server=NoServer())
        if cpu is not None:  # the undoing is the floor's own book-keeping, not grading: left out
            cpu.append(time.process_time() - c0 - (undo.seconds - undone))
    finally:
        os.chdir(here)
        shutil.rmtree(scratch, ignore_errors=True)
        autograder.session.Sandbox = autograder.sandbox.client.Sandbox = saved
        autograder.session.Session.close = close
        sys.modules["__main__"] = main
    return results


class _Undo:
    """Puts back what a student's code rebound in the libraries it shares with the floor's judge.

    In a real sandbox ``torch.allclose = lambda *a, **k: True`` dies with the sandbox; in the floor
    the "sandbox" is a thread of the judge, and without this every later submission (and the judge's
    own comparisons) would run with it. Taken once, before grading: the attributes of torch's, NumPy's
    and the standard modules a notebook touches, and of the classes students patch. At each
    submission's end, a name bound to something the student's cells made (its ``__module__`` is the
    notebook's, ``__main__``) gets its value back, and a name deleted is put back. Everything else a
    library changed lazily (caches, counters, fused kernels looked up at first use) is kept, as a warm
    process keeps it.
    """

    PACKAGES = ("torch", "numpy", "builtins", "math", "random", "functools", "operator", "copy", "itertools")

    def __init__(self) -> None:
        import torch

        self.seconds = 0.0
        self.modules = [(m, dict(vars(m))) for name, m in list(sys.modules.items())
                        if m is not None and name.split(".", 1)[0] in self.PACKAGES]
        classes = (torch.Tensor, torch.nn.Module, torch.nn.Parameter, torch.optim.Optimizer)
        self.classes = [(c, dict(vars(c))) for c in classes]

    @staticmethod
    def _students(value: object) -> bool:
        try:
            return getattr(value, "__module__", None) == "__main__"
        except Exception:  # noqa: BLE001 - an object whose attributes raise is not one of ours either
            return True

    def __call__(self) -> None:
        t0 = time.process_time()
        for m, before in self.modules:
            now = vars(m)
            for k, v in before.items():
                if k not in now or (now[k] is not v and self._students(now[k])):
                    now[k] = v
        for c, before in self.classes:
            now = vars(c)
            for k in [k for k in now if k not in before and self._students(now[k])]:
                delattr(c, k)
            for k, v in before.items():
                if k not in ("__dict__", "__weakref__") and (k not in now or (now[k] is not v
                                                                          and self._students(now[k]))):
                    setattr(c, k, v)
        self.seconds += time.process_time() - t0


def per_exercise(results: list) -> str:
    by_ex: dict[str, list[float]] = {}
    for r in results:
        for e in r.exercises:
            by_ex.setdefault(e.id, []).append(sum(t.seconds for t in e.tests))
    return ", ".join(f"{k} {statistics.mean(v):.2f}" for k, v in by_ex.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100, help="submissions in the class (default 100)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--assignment", default="pytorch-fundamentals")
    ap.add_argument("--course", default=str(ROOT))
    ap.add_argument("--exercise", action="append", help="only these exercises (repeatable)")
    ap.add_argument("--floor-n", type=int, default=20, help="submissions timed for the floor (default 20)")
    ap.add_argument("--no-floor", action="store_true")
    args = ap.parse_args()

    assignment = load_assignment(args.assignment, Path(args.course), only=args.exercise)
    with tempfile.TemporaryDirectory(prefix="torchgrader-bench-") as tmp:
        tmp = Path(tmp)
        sources = samples(assignment, tmp / "samples", args.exercise)
        paths = class_of(sources, args.n, tmp / "class")
        cfg = WorkerConfig(course=str(assignment.course), assignment=assignment.id,
                           options=GradeOptions(exercises=args.exercise))
        opts = BatchOptions(out=tmp / "out", worker=cfg, jobs=args.jobs, progress="plain", report=True)
        log = open(tmp / "progress.log", "w")  # noqa: SIM115 - closed below
        firsts: list[float] = []
        t0 = time.perf_counter()

        import autograder.batch.progress as progress_mod

        original = progress_mod.PlainProgress.render

        def stamp(self, r):  # when each result arrived, for the steady-state rate
            firsts.append(time.perf_counter())
            original(self, r)

        progress_mod.PlainProgress.render = stamp
        summary = grade_batch(assignment, [tmp / "class"], opts, stream=log, err=log)
        wall = time.perf_counter() - t0
        log.close()
        per = [r.seconds for r in summary.results]
        steady = (len(firsts) - 1) / (firsts[-1] - firsts[0]) * 60 if len(firsts) > 1 else 0.0
        graded_ok = sum(r.status == "graded" for r in summary.results)
        print(f"assignment {assignment.id}: {len(assignment.exercises)} exercises "
              f"({', '.join(assignment.ids)}); {len(sources)} distinct samples, {args.n} submissions, "
              f"--jobs {args.jobs}, {os.cpu_count()} cores")
        print(f"batch: {wall:.1f} s wall in all ({graded_ok} graded), {60 * args.n / wall:.1f} submissions/min "
              f"including worker start-up; steady state {steady:.1f}/min")
        print(f"per submission (worker side): median {statistics.median(per):.2f} s, p95 {pct(per, 0.95):.2f} s")
        print(f"per exercise, mean seconds of its tests: {per_exercise(summary.results)}")
        if args.no_floor:
            return
        floor_results = floor(assignment, paths[: args.floor_n], args.exercise)
        fl = [r.seconds for r in floor_results]
        med = statistics.median(fl)
        per_sub_batch = wall / args.n
        print(f"floor (one warm process, no isolation, {len(fl)} submissions): median {med:.2f} s, "
              f"p95 {pct(fl, 0.95):.2f} s, {60 / statistics.mean(fl):.1f} submissions/min")
        print(f"floor per exercise, mean seconds of its tests: {per_exercise(floor_results)}")
        mean_floor = statistics.mean(fl)
        print(f"ratio to the floor: batch wall per submission {per_sub_batch:.2f} s / floor {mean_floor:.2f} s "
              f"= {per_sub_batch / mean_floor:.2f}x; per-submission median {statistics.median(per) / med:.2f}x")


if __name__ == "__main__":
    main()
