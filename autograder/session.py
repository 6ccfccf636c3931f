"""Stage 2 (session): run a submission's cells in a sandbox, and keep one running for the judge.

A cell that raises is recorded and the next cell runs anyway, so later
definitions still exist. A cell that hangs or kills its process is recorded,
the sandbox is restarted, and the cells are replayed without it: it costs
only what depends on it. When a test's call hangs, the judge kills the
sandbox; the next test gets a fresh one with the same cells replayed.

A suite can also run calls in the submission's *second* sandbox (``enter_apart``):
the same cells replayed in another process, which never runs anything of the
first one's. A checkpoint saved in one is resumed in the other, and the second
one serves every resume of an exercise instead of a new process for each.
"""

from __future__ import annotations

import time
from typing import Any

from autograder.assignment import PROBES
from autograder.caps import cap_error
from autograder.errors import (
    SandboxCannotStart,
    SandboxCrashed,
    SandboxError,
    SandboxNoReply,
    SandboxOutOfMemory,
    StudentException,
    SuiteError,
    meaning,
)
from autograder.load import Cell, Submission
from autograder.options import Budget
from autograder.results import CellResult, CellStatus
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer
from autograder.sandbox.seccomp import blocked_hint


def format_frames(cells_by_index: dict[int, Cell], frames: list) -> str:
    out = []
    for fr in frames or []:
        try:
            cell, line, name, code = fr
        except (TypeError, ValueError):
            continue
        c = cells_by_index.get(cell)
        where = c.location(line) if c else f"cell {cell}, line {line}"
        out.append(f"  {where}, in {name}" + (f"\n    {code}" if code else ""))
    return "\n".join(out)


# What the waiting one of a submission's two sandboxes may still grow by (it runs nothing meanwhile).
APART_MARGIN = 256 * 2**20


class Session:
    """One submission's life in the sandbox, as the judge sees it."""

    def __init__(
        self,
        server: SandboxServer,
        submission: Submission,
        config: SandboxConfig,
        budget: Budget | None = None,
        probes: dict[str, str] | None = None,
    ) -> None:
        self.server = server
        self.submission = submission
        self.config = config
        self.budget = budget or Budget()
        self.started = time.monotonic()
        self.deadline = self.started + self.budget.submission_seconds
        self.cells: dict[int, CellResult] = {}
        self.skip: set[int] = set()  # cells that hung or crashed: never replayed
        self.sandbox: Sandbox | None = None
        self.generation = 0  # the current sandbox's number: a handle made in another is refused
        self._numbered = 0  # the last number given (each sandbox, first or second, gets a new one)
        self.restarts = 0
        self.protections: dict[str, str] = {}
        self.probes = dict(probes or {})  # exercise id -> probe source, loaded before the first cell
        self.probes_loaded: set[str] = set()
        self.probe_errors: dict[str, str] = {}
        self.output = ""
        self.cells_by_index = {c.index: c for c in submission.cells}
        self.cannot_start: SandboxCannotStart | None = None  # set: no grade may come of this submission
        # the grader's own code (a decoder) on this submission's bytes, in sandboxes where no student code runs:
        # one per source for this submission only, never another student's (see clean())
        self._clean: dict[str, Sandbox] = {}
        # the second sandbox (see enter_apart): the one kept aside while it is current, and it while it is not
        self._kept: Sandbox | None = None
        self._apart: Sandbox | None = None
        self._kept_generation = self._apart_generation = -1  # their numbers while the other is current

    # ------------------------------------------------------------------ lifecycle
    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def ensure(self) -> Sandbox:
        """A live sandbox with the student's cells run; starts or restarts as needed."""
        if self.sandbox is not None and self.sandbox.alive:
            return self.sandbox
        if self.sandbox is not None:
            self._collect_output()
            self.restarts += 1
            if self.restarts > self.budget.max_restarts:
                raise SandboxCrashed("the sandbox was restarted too many times for this submission")
        if self.time_left() <= 0:
            raise SandboxNoReply(self.budget.submission_seconds)
        if self._kept is None and self._apart is not None:  # a new first sandbox: the pair's share is off,
            self._end(self._apart)  # so the second ends before the new one starts (never three at once)
            self._apart = None
        while True:
            try:
                sb = Sandbox(self.server, self.config)
            except SandboxCannotStart as e:  # kept: a test that catches every exception cannot hide it
                self.cannot_start = e
                raise
            if self._kept is not None and sb.has_cgroup and \
                    not sb.narrow_memory(self.config.limits.memory_bytes - self._kept.memory_limit):
                sb.kill()  # no student code has run in it; without its share the pair could exceed the limit
                raise SandboxCrashed("the second sandbox's memory limit could not be set")
            self.sandbox = sb
            self._numbered += 1
            self.generation = self._numbered
            self.probes_loaded = set()
            self.protections = sb.protections
            if self._load_probes(sb) and self._run_cells(sb):
                return sb
            self._collect_output()

    def restart(self) -> Sandbox:
        """A fresh sandbox on purpose (not counted as a restart after a crash)."""
        if self.sandbox is not None:
            self._collect_output()
        self.sandbox = None
        return self.ensure()

    # ------------------------------------------------------------------ the second sandbox
    def enter_apart(self) -> None:
        """Make the submission's second sandbox the current one, the first kept alive aside.

        The second one replays the same cells in its own process and runs only what is asked of it
        while it is current: it never saw anything the first one ran (a checkpoint's save). It is made
        at the first call and reused until :meth:`drop_apart`: one process for every resume of an
        exercise instead of a new one for each (each costs a fork, a replay, and the copies of every
        page the work then writes).

        While both live they share the one memory limit (:meth:`_balance`). Where the first holds so
        much that the second would get less than half of it, or a limit cannot be set, the first is
        replaced instead, as ``restart`` does, and the new one stays current (the old way, with the
        same guarantee).
        """
        if self._kept is not None:
            raise SuiteError("the second sandbox is already current (a nested `with sandbox.apart():`)")
        main = self.sandbox
        if main is None or not main.alive:  # nothing to keep: a new sandbox that never saw anything
            self.restart()
            return
        if self._apart is not None and not self._apart.alive:
            self._end(self._apart)
            self._apart = None
        if self._apart is None:
            shared = self._idle_share(main) is not None
        else:
            shared = self._balance(current=self._apart, idle=main)
        if not shared:
            self._end_apart()
            self.restart()
            return
        self._kept, self.sandbox, self._apart = main, self._apart, None
        self._kept_generation, self.generation = self.generation, self._apart_generation
        try:
            self.ensure()
        except BaseException:
            self.leave_apart()
            raise

    def leave_apart(self) -> None:
        """The first sandbox is current again; the second waits, alive, for the next :meth:`enter_apart`."""
        if self._kept is None:
            return
        self._apart, self.sandbox, self._kept = self.sandbox, self._kept, None
        self._apart_generation, self.generation = self.generation, self._kept_generation
        main, second = self.sandbox, self._apart
        if main is None or not main.alive:
            return  # the next request starts a new first sandbox, which ends the second (ensure)
        if second is None or not second.alive or not self._balance(current=main, idle=second):
            self._end_apart()  # the first gets its whole limit back

    def drop_apart(self) -> None:
        """End the second sandbox (an exercise's tests are done) and give the first its whole limit back."""
        self.leave_apart()
        self._end_apart()

    def _end_apart(self) -> None:
        if self._apart is not None:
            self._end(self._apart)
            self._apart = None
        main, limit = self.sandbox, self.config.limits.memory_bytes
        if self._kept is None and main is not None and main.alive and main.memory_limit != limit:
            main.narrow_memory(limit)

    def _idle_share(self, idle: Sandbox) -> int | None:
        """Narrow the sandbox that waits to what it holds plus ``APART_MARGIN``: its new limit, or None.

        None when the other would be left less than half the limit, or when the kernel refused. Without a
        cgroup each process is limited on its own (rlimits), in either sandbox: 0, nothing to share.
        """
        if not idle.has_cgroup:
            return 0
        limit = self.config.limits.memory_bytes
        used = idle.memory_in_use()
        if used is None:
            return None
        keep = min(idle.memory_limit, used + APART_MARGIN)
        if limit - keep < limit // 2:
            return None
        if keep != idle.memory_limit and not idle.narrow_memory(keep):
            return None
        return keep

    def _balance(self, *, current: Sandbox, idle: Sandbox) -> bool:
        """Give the sandbox about to run what the waiting one does not hold; False when the pair cannot share.

        The waiting one runs nothing meanwhile: it is narrowed first (to what it holds plus the margin),
        then the current one is given the rest, so the two never hold more than one sandbox's limit.
        """
        keep = self._idle_share(idle)
        if keep is None:
            return False
        return not current.has_cgroup or current.narrow_memory(self.config.limits.memory_bytes - keep)

    def _load_probes(self, sb: Sandbox) -> bool:
        """Load every probe module before any student code runs; False if the sandbox died."""
        for exercise, source in list(self.probes.items()):
            try:
                sb.request("load_probes", source, exercise=exercise, timeout=max(1.0, min(60.0, self.time_left())))
                self.probes_loaded.add(exercise)
            except StudentException as e:
                err = e.error
                self.probe_errors[exercise] = f"{err.get('type', 'Error')}: {err.get('message', '')}"
            except SandboxCrashed as e:
                if isinstance(e, SandboxOutOfMemory):
                    self.probe_errors[exercise] = f"the sandbox failed while loading the probes ({e})"
                    del self.probes[exercise]
                    return False
                # No student code has run in this sandbox yet: it died before its first cell, never a grade.
                self.cannot_start = SandboxCannotStart(
                    f"the sandbox died before the first cell of {self.submission.name}, while loading the probes of "
                    f"{exercise!r} ({e}), so nothing is graded: no student code had run. Check that exercise's "
                    f"{PROBES} (`torchgrader try ASSIGNMENT {exercise}`) and the sandbox server's log",
                    step="probes")
                raise self.cannot_start from None
            except SandboxError as e:
                self.probe_errors[exercise] = f"the sandbox failed while loading the probes ({e})"
                del self.probes[exercise]  # never again: the next sandbox starts without them
                return False
        return True

    def _run_cells(self, sb: Sandbox) -> bool:
        """Run every cell not known to hang; False if the sandbox died (restart needed)."""
        first_time = not self.cells
        for cell in self.submission.cells:
            if cell.index in self.skip:
                continue
            timeout = min(self.budget.cell_seconds, max(self.time_left(), 0.01))
            started = time.monotonic()
            try:
                sb.request("exec", cell.source, cell=cell.index, timeout=timeout)
                result = CellResult(cell.index, "ok", "", time.monotonic() - started, cell.label)
            except StudentException as e:
                result = CellResult(cell.index, "error", self._raised(e), time.monotonic() - started, cell.label)
            except SandboxError as e:  # the cell hung or ended the process: it is never replayed
                self.skip.add(cell.index)
                status, why = self._stopped(e, timeout)
                self._record(CellResult(cell.index, status, why, time.monotonic() - started, cell.label), force=True)
                if isinstance(e, SandboxNoReply) and self.time_left() <= 0:
                    raise SandboxNoReply(self.budget.submission_seconds) from None
                return False
            self._record(result, force=first_time)
        return True

    def _raised(self, e: StudentException) -> str:
        """What a cell that raised tells its student: the exception, a hint when a blocked call caused it, where."""
        err = cap_error(e.error)
        frames = format_frames(self.cells_by_index, err.get("frames") or [])
        msg = f"{err.get('type', 'Error')}: {err.get('message', '')}"
        msg += blocked_hint(err.get("type", ""), err.get("message", ""))
        return msg + ("\n" + frames if frames else "")

    def _stopped(self, e: SandboxError, timeout: float) -> tuple[CellStatus, str]:
        """(status, message) of a cell that hung, ran out of memory or stopped the Python process.

        A cell's status is not a test's: errors.TABLE says which of these errors is a timeout (a test that
        met it is one too), and a cell that met any other never came back ("crashed"), where a test would
        read "error". The message, with what to do, depends on which error it was.
        """
        if meaning(e).status == "timeout":
            return "timeout", (
                f"did not finish within {timeout:.0f} s, so it was skipped: "
                "move long computations out of top-level code"
            )
        if isinstance(e, SandboxOutOfMemory):
            limit = self.config.limits.memory_bytes / 2**30
            return "crashed", (
                f"ran out of memory ({e}), so it was skipped: the sandbox, with every process your code "
                f"starts, may use at most {limit:.1f} GiB"
            )
        return "crashed", (
            f"stopped the Python process ({e}), so it was skipped: "
            "remove calls such as os._exit() or code that crashes the interpreter"
        )

    def _record(self, result: CellResult, force: bool) -> None:
        if force or result.index not in self.cells:
            self.cells[result.index] = result

    def _collect_output(self, wait_output: float = 0.0) -> None:
        if self.sandbox is not None:
            self._end(self.sandbox, wait_output)

    def _end(self, sb: Sandbox, wait_output: float = 0.0) -> None:
        """Kill a sandbox of the student's and keep what it printed (read until its end, for ``wait_output`` s)."""
        sb.kill()
        if wait_output > 0:
            sb.wait_output(wait_output)
        out = sb.output
        if out and len(self.output) < 64 * 1024:
            self.output += out

    def clean(self, source: str, timeout: float) -> Sandbox:
        """A sandbox that never runs student code, with the grader's ``source`` loaded as its probe module.

        Kept for this submission's later calls: what it decodes is this student's bytes only, so a
        file that could change it changes only what it says about the same student, and it ends
        with the submission (:meth:`close`). A call that fails drops it (:meth:`drop_clean`).
        """
        sb = self._clean.get(source)
        if sb is not None and sb.alive:
            return sb
        sb = Sandbox(self.server, self.config)
        try:
            sb.request("load_probes", source, exercise="clean", timeout=timeout)
        except BaseException:
            sb.kill()
            raise
        self._clean[source] = sb
        return sb

    def drop_clean(self, source: str) -> None:
        sb = self._clean.pop(source, None)
        if sb is not None:
            sb.kill()

    def close(self, wait_output: float = 0.0) -> None:
        """End the submission's sandboxes. ``wait_output``: read what the last one printed to its end, for at
        most that long (a copy of the judge reports its output once, as it exits: judge/spread.py)."""
        self.drop_apart()
        self._collect_output(wait_output)
        self.sandbox = None
        for source in list(self._clean):
            self.drop_clean(source)

    # ------------------------------------------------------------------ requests
    def request(self, op: str, payload: Any = None, *, timeout: float, **fields: Any) -> tuple[dict, Any]:
        sb = self.ensure()
        return sb.request(op, payload, timeout=max(0.01, min(timeout, self.time_left())), **fields)
