"""The judge's view of the student's namespace: calls go to the sandbox, values come back.

Student-side problems (a missing name, a stub, an exception, a hang, a dead
process) surface here as :class:`StudentProblem` subclasses carrying a message
written for the student; the plugin turns them into test results.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.assignment import PROBES, Exercise
from autograder.defaults import default_of
from autograder.errors import (
    GraderError,
    JudgeOvertime,
    ProtocolError,
    ReplyTooLarge,
    SandboxCrashed,
    SandboxNoReply,
    SandboxOutOfMemory,
    StudentCrash,
    StudentError,
    StudentException,
    StudentNameMissing,
    StudentNotImplemented,
    StudentOverTime,
    StudentProblem,
    SuiteError,
)
from autograder.judge.torch_errors import clean_message, meaning
from autograder.sandbox import wire

# The problems a test meets are defined in autograder/errors.py (the one tree); staff suites may use the old name.
StudentTimeout = StudentOverTime

if TYPE_CHECKING:
    from autograder.session import Session


def strip_source(source: str) -> str:
    """Probe source without docstrings or comments: what ships into the sandbox.

    Probes are visible to student code (they run beside it), so staff notes
    never travel with them; expected values never live in probes at all.
    """
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree) + "\n"


def _unsendable(value: Any, where: str) -> tuple[str, str] | None:
    """(where and what, why) of the first part of an argument that cannot be sent to the sandbox, or None."""
    if isinstance(value, Handle):
        return None
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            if (bad := _unsendable(v, f"{where}[{i}]")) is not None:
                return bad
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if (bad := _unsendable(v, f"{where}[{k!r}]")) is not None:
                return bad
        return None
    try:
        wire.pack({}, value)
    except wire.WireError as e:
        return f"{where} ({type(value).__name__})", str(e)
    return None


def unsendable_message(label: str, args: tuple, kwargs: dict, error: str) -> str:
    """What a staff member reads when a test passes an argument the wire refuses."""
    found = None
    for i, a in enumerate(args):
        if (found := _unsendable(a, f"argument {i + 1}")) is not None:
            break
    else:
        for k, v in kwargs.items():
            if (found := _unsendable(v, f"keyword argument {k}")) is not None:
                break
    what, why = found or ("an argument", error)
    return (f"the test passes {what} of `{label}` that cannot be sent to the sandbox: {why}. Only plain "
            "values cross (tensors, arrays, numbers, strings, lists, dicts). Build the object inside the "
            "sandbox instead: `sandbox.ref(\"module.name\")` for an importable function or class (e.g. "
            f"`sandbox.ref(\"torch.nn.functional.relu\")`), or a probe in {PROBES} that constructs it and "
            "calls the student's code.")


@dataclass
class Call:
    """A call's result with the arguments as they were after the call (one message)."""

    value: Any
    args: list
    kwargs: dict


# seconds past a test's deadline before the watchdog interrupts the judge's own (Python) work
OVERTIME_GRACE = 2.0


_IN_SANDBOX_CALL = [0]  # > 0 while the judge waits on the sandbox: such waits are bounded by their own timeouts
# True only while a test of a suite runs (the judge plugin's per-test fixture sets it): a SIGPROF at any
# other moment (a timer re-armed outside a test by a restart, a process that graded in-process and went on
# with other work) interrupts nothing.
CLOCK_RUNNING = [False]


def disarm_watchdog() -> None:
    """No test is running: the watchdog neither fires nor stays armed (called after every pytest run)."""
    CLOCK_RUNNING[0] = False
    try:
        signal.setitimer(signal.ITIMER_PROF, 0)
    except ValueError:  # not the main thread: no timer was armed from here
        pass


def _overtime(signum: int, frame: Any) -> None:
    if not CLOCK_RUNNING[0]:
        return
    if _IN_SANDBOX_CALL[0]:  # never interrupt the protocol mid-request: look again in a moment
        signal.setitimer(signal.ITIMER_PROF, 0.5)
        return
    # One interrupt per test: a second SIGPROF landing in the test's teardown (the fixture's own finally)
    # would otherwise abort it before it stops the clock, leaving the watchdog armed for unrelated work.
    CLOCK_RUNNING[0] = False
    raise JudgeOvertime(
        "This test ran out of time while the grader was checking what your code returned: the values are "
        "far larger (or more numerous) than this exercise needs. Return only what the statement asks for."
    )


class Context:
    """What the fixtures talk through: the current submission's session and test clock."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.deadline: float = float("inf")
        self.overran = False  # the last test ran past its deadline (judge-side work included)
        self.timeout: float = default_of(Exercise, "timeout")  # each test sets its exercise's
        self.exercise: str = ""
        self.probes_path: Path | None = None
        self.seed: int = 0
        # the test's seed, sent with the next request rather than as one of its own (see seed_next)
        self.pending_seed: int | None = None
        self.in_apart = False  # inside `with sandbox.apart():`

    # ------------------------------------------------------------------ the test's clock
    def restart_clock(self) -> None:
        """The test's deadline is its limit from now, and a watchdog interrupts the judge past it.

        Sandbox calls are bounded by the deadline themselves; the watchdog bounds what the
        judge does between them: ITIMER_PROF counts the judge's own CPU time (waiting on the
        sandbox costs none, and a loaded machine does not make honest work look long), and its
        SIGPROF interrupts Python code (main thread only). C code (a decompressor, list.count)
        is not interruptible: suites bound sizes before such work.
        """
        self.deadline = time.monotonic() + self.timeout
        self.overran = False
        try:
            signal.signal(signal.SIGPROF, _overtime)
            signal.setitimer(signal.ITIMER_PROF, self.timeout + OVERTIME_GRACE)
        except ValueError:  # not the main thread: the deadline is still checked after the test
            pass

    def stop_clock(self) -> None:
        CLOCK_RUNNING[0] = False
        self.overran = time.monotonic() > self.deadline
        self.deadline = float("inf")
        try:
            signal.setitimer(signal.ITIMER_PROF, 0)
        except ValueError:
            pass

    # ------------------------------------------------------------------ plumbing
    def _timeout(self, label: str) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StudentOverTime(
                f"This test ran out of time ({self.timeout:g} s) before `{label}` was called: "
                "your earlier calls in this test were too slow."
            )
        return left

    def seed_next(self) -> None:
        """Seed the sandbox's generators with the test's seed right before its next request.

        The sandbox runs nothing between two requests, so seeding at the start of the next one is
        the same as a request of its own, less a round trip per test (some 130 per submission).
        """
        self.pending_seed = self.seed

    def request(self, op: str, payload: Any = None, *, label: str, **fields: Any) -> Any:
        _IN_SANDBOX_CALL[0] += 1
        try:
            return self._request(op, payload, label=label, **fields)
        finally:
            _IN_SANDBOX_CALL[0] -= 1

    def _request(self, op: str, payload: Any = None, *, label: str, **fields: Any) -> Any:
        assert self.session is not None, "no submission is being graded"
        if self.pending_seed is not None:
            fields["seed_first"], self.pending_seed = self.pending_seed, None
        try:
            head, value = self.session.request(op, payload, timeout=self._timeout(label), **fields)
        except StudentException as e:
            if e.error.get("origin") == "grader":
                raise GraderError(
                    f"`{label}`: {e.error.get('type', 'Exception')}: {e.error.get('message', '')}"
                ) from None
            raise self._problem(e.error, label) from None
        except SandboxNoReply:
            raise StudentOverTime(
                f"`{label}` did not finish within {self.timeout:g} s, the time limit of this test. "
                "Look for an infinite loop, or work that grows much faster than the input "
                "(a Python loop over every element, a huge intermediate tensor)."
            ) from None
        except SandboxOutOfMemory:
            sb = self.session.sandbox if self.session else None
            limit = (sb.memory_limit if sb is not None else self.session.config.limits.memory_bytes) / 2**30
            raise StudentError(
                f"`{label}` ran out of memory in exercise `{self.exercise}`: your code, with every process it "
                f"started, reached the sandbox's memory limit of {limit:.1f} GiB, and the grader stopped it. "
                "Look for a tensor that grows with every step, an (n, n) intermediate you do not need, or "
                "worker processes that each hold a copy of the data."
            ) from None
        except ReplyTooLarge:
            raise StudentError(
                f"`{label}` returned a value too large for the grader to check: it did not fit in the "
                "grader's memory limit. Return only what the exercise asks for."
            ) from None
        except (SandboxCrashed, ProtocolError) as e:
            output = self.session.sandbox.output[-600:] if self.session.sandbox else ""
            raise StudentCrash(
                f"The Python process running your code stopped while running `{label}` ({e}). "
                "This happens when code calls os._exit(), kills its own process, crashes the "
                "interpreter, or tampers with the grader."
                + (f" The last thing it printed was:\n{output}" if output.strip() else "")
            ) from None
        return self._wrap(value, label)

    def _problem(self, err: dict, label: str) -> StudentProblem:
        from autograder.caps import cap_error
        from autograder.sandbox.seccomp import blocked_hint
        from autograder.session import format_frames

        err = cap_error(err)
        kind = err.get("kind")
        etype, msg = err.get("type", "Exception"), err.get("message", "")
        frames = err.get("frames") or []
        cells = self.session.cells_by_index if self.session else {}
        tb = format_frames(cells, frames)
        where = f"\n{tb}" if tb else ""
        if kind == "missing_name":
            text, cause = self._missing_message(str(msg))
            problem = StudentNameMissing(text)
            problem.cause = cause
            return problem
        if kind == "not_implemented":
            fn = frames[-1][2] if frames else label
            return StudentNotImplemented(
                f"`{fn}` is not implemented yet: it still raises NotImplementedError. "
                "Replace the stub's body with your code."
            )
        if kind == "memory":
            limit = self.session.config.limits.memory_bytes / 2**30 if self.session else 0
            return StudentError(
                f"`{label}` ran out of memory (the limit is {limit:.1f} GiB): {etype}: {msg}{where}\n"
                "Look for a tensor that grows with every step, or an (n, n) intermediate you do not need."
            )
        if kind == "encoding":
            return StudentError(f"`{label}` returned something that cannot be graded: {msg}.")
        origin = f"`{frames[-1][2]}`" if frames else f"`{label}`"
        if frames and frames[-1][2] == "<module>":
            origin = "your code"
        msg = clean_message(str(msg))
        said = meaning(msg)
        return StudentError(f"{origin} raised {etype}: {msg}{blocked_hint(etype, msg)}{where}"
                            + (f"\n{said}" if said else ""))

    def _missing_message(self, name: str) -> tuple[str, str]:
        """The message of a test that needs ``name``, and its cause shared with other tests ("" when none).

        A cell that did not run is the cause of every test needing a name it defines: the cause is
        worded without ``name``, so feedback can say it once for all of them.
        """
        from autograder.load import defines

        text = f"`{name}` is not defined. Define it at the top level of a code cell, with exactly this name."
        session = self.session
        if session is None:
            return text, ""
        defining = [c for c in session.submission.cells if defines(c.source, name)]
        broken = [(c, r) for c in defining if (r := session.cells.get(c.index)) is not None and r.status != "ok"]
        if broken:
            notes = [
                f"{c.label} did not run cleanly ({r.message.splitlines()[0] if r.message else r.status})"
                for c, r in broken[:2]
            ]
            cause = ("; ".join(notes) + ", so the names it defines are missing. Fix that cell first: every test "
                     "that needs one of them fails until it runs.")
            return f"`{name}` is not defined: {cause}", cause
        if not defining:
            return text + NO_CELL_DEFINES, ""
        return text, ""

    def _wrap(self, value: Any, label: str) -> Any:
        if isinstance(value, wire.HandleRef):
            gen = self.session.generation if self.session else 0
            return Handle(self, value, label, gen)
        if isinstance(value, list):
            return [self._wrap(v, label) for v in value]
        if isinstance(value, tuple):
            return tuple(self._wrap(v, label) for v in value)
        if isinstance(value, dict):
            return {k: self._wrap(v, label) for k, v in value.items()}
        return value

    def _args(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        return [self._unwrap(a) for a in args], {k: self._unwrap(v) for k, v in kwargs.items()}

    def _unwrap(self, v: Any) -> Any:
        if isinstance(v, Handle):
            v._check_alive()
            return v._ref
        if isinstance(v, list):
            return [self._unwrap(x) for x in v]
        if isinstance(v, tuple):
            return tuple(self._unwrap(x) for x in v)
        if isinstance(v, dict):
            return {k: self._unwrap(x) for k, x in v.items()}
        return v

    # ------------------------------------------------------------------ operations
    def getattr(self, target: Handle | None, name: str, label: str) -> Any:
        tid = None
        if target is not None:
            target._check_alive()
            tid = target._ref.id
        return self.request("getattr", target=tid, name=name, label=label)

    def call(
        self, target: Handle | None, name: str | None, args: tuple, kwargs: dict, label: str, detailed: bool = False
    ) -> Any:
        tid = None
        if target is not None:
            target._check_alive()
            tid = target._ref.id
        payload = self._args(args, kwargs)
        self._sendable(payload, args, kwargs, label)
        return self.request("call", payload, target=tid, name=name, detailed=detailed, label=label)

    @staticmethod
    def _sendable(payload: Any, args: tuple, kwargs: dict, label: str) -> None:
        """Refuse, as the suite's mistake, arguments the wire cannot carry (before anything is sent)."""
        try:
            wire.pack({}, payload)
        except wire.WireError as e:
            raise SuiteError(unsendable_message(label, args, kwargs, str(e))) from None

    def probe(self, name: str, args: tuple, kwargs: dict) -> Any:
        """Run a probe; the session loaded every probe module before the student's first cell."""
        assert self.session is not None
        _IN_SANDBOX_CALL[0] += 1
        try:
            self.session.ensure()
        finally:
            _IN_SANDBOX_CALL[0] -= 1
        key = self.exercise
        known = probe_names(self.probes_path)
        if name not in known:
            where = str(self.probes_path) if self.probes_path else f"{key}'s {PROBES}"
            have = ", ".join(sorted(known)) if known else "none"
            raise SuiteError(f"the test asks for the probe {name!r}, which {where} does not define; "
                             f"the probes that exist: {have}")
        if key not in self.session.probes_loaded:
            why = self.session.probe_errors.get(key) or f"exercise {key!r} has no {PROBES}"
            raise GraderError(f"probe {name!r} of {key}: {why}")
        payload = self._args(args, kwargs)
        self._sendable(payload, args, kwargs, f"probe {name}")
        return self.request("probe", payload, exercise=key, name=name, label=f"{name}")

    def clean_probe(self, source: str, name: str, args: tuple, *, label: str) -> Any:
        """Run the grader's own ``source`` in a sandbox that never runs student code; its reply.

        For work on student-made bytes that must not happen in the judge (an
        unpickler, a decompressor): the sandbox's limits bound it, and nothing
        the student's code did can reach it. The student's own sandbox is left as it was.
        One such sandbox serves this submission's calls (``Session.clean``): it sees only
        this student's bytes, never another student's, and a failed call replaces it.
        """
        assert self.session is not None, "no submission is being graded"
        _IN_SANDBOX_CALL[0] += 1
        try:
            return self._clean_probe(source, name, args, label=label)
        finally:
            _IN_SANDBOX_CALL[0] -= 1

    def _clean_probe(self, source: str, name: str, args: tuple, *, label: str) -> Any:
        from autograder.errors import SandboxError

        assert self.session is not None
        session = self.session
        self._timeout(label)  # a test already out of time starts nothing
        started = time.monotonic()
        try:
            # the grader's own sandbox: no student byte has reached it yet, so its start-up is bounded by the
            # exercise's limit rather than by what the test has left
            sb = session.clean(source, self.timeout)
        except (SandboxError, StudentException) as e:
            raise GraderError(f"`{label}`: a clean sandbox could not start ({e})") from None
        finally:
            # Its start-up (a spawn that may wait for the server's warm-up) is not the student's time, as the
            # student's own sandbox's start-up is not (see plugin._ready_sandbox).
            self.deadline += time.monotonic() - started
        try:
            _, value = sb.request("probe", (list(args), {}), exercise="clean", name=name,
                                  timeout=self._timeout(label))
        except BaseException as e:
            session.drop_clean(source)  # whatever it was doing, the next call starts a new one
            self._clean_failed(e, label)
            raise
        return value

    def _clean_failed(self, e: BaseException, label: str) -> None:
        """What a failed clean call tells the student and staff (a raise); other exceptions pass unchanged."""
        if isinstance(e, StudentException):
            raise GraderError(f"`{label}`: {e.error.get('type', 'Exception')}: {e.error.get('message', '')}") \
                from None
        if isinstance(e, SandboxNoReply):
            raise StudentOverTime(
                f"`{label}` did not finish within {self.timeout:g} s, the time limit of this test."
            ) from None
        if isinstance(e, SandboxOutOfMemory):
            raise StudentError(
                f"`{label}`: decoding the file your code wrote went over the sandbox's memory limit."
            ) from None
        if isinstance(e, ReplyTooLarge):
            raise StudentError(f"`{label}`: the file your code wrote decodes to more than the grader accepts.") \
                from None
        if isinstance(e, SandboxCrashed | ProtocolError):
            raise StudentCrash(f"`{label}`: decoding the file your code wrote stopped the decoder ({e}).") from None

    def fresh(self) -> None:
        """Replace the sandbox with a fresh one (the student's cells replayed, nothing else run in it)."""
        assert self.session is not None
        self.session.restart()
        self.restart_clock()  # start-up and replay are not the test's time
        self.seed_next()

    @contextlib.contextmanager
    def apart(self) -> Iterator[None]:
        """The calls inside run in the submission's second sandbox (``Session.enter_apart``)."""
        assert self.session is not None
        if self.in_apart:
            raise SuiteError("the test nests `with sandbox.apart():` inside another: it is already in the second "
                             "sandbox, so leave the inner one out")
        session = self.session
        _IN_SANDBOX_CALL[0] += 1
        try:
            session.enter_apart()
        finally:
            _IN_SANDBOX_CALL[0] -= 1
        self.in_apart = True
        self.restart_clock()  # as fresh(): its start-up and replay are not the test's time
        self.seed_next()
        try:
            yield
        finally:
            self.in_apart = False
            session.leave_apart()
            self.seed_next()


class Handle:
    """An object that lives in the sandbox. Attribute access and calls are remote."""

    __slots__ = ("_ctx", "_ref", "_label", "_generation")

    def __init__(self, ctx: Context, ref: wire.HandleRef, label: str, generation: int) -> None:
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_generation", generation)

    def _check_alive(self) -> None:
        s = self._ctx.session
        if s is None or s.generation != self._generation or s.sandbox is None or not s.sandbox.alive:
            raise StudentCrash(
                f"`{self._label}` was lost: the process running your code was restarted "
                "after an earlier problem (a hang or a crash)."
            )

    @property
    def remote_type(self) -> str:
        return self._ref.type

    @property
    def remote_mro(self) -> tuple[str, ...]:
        return self._ref.mro

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._ctx.getattr(self, name, f"{self._label}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ctx.call(self, None, args, kwargs, self._label)

    def __getitem__(self, key: Any) -> Any:
        self._check_alive()
        return self._ctx.request(
            "getitem", self._ctx._unwrap(key), target=self._ref.id, label=f"{self._label}[{key!r}]"
        )

    def __len__(self) -> int:
        self._check_alive()
        n = self._ctx.request("len", target=self._ref.id, label=f"len({self._label})")
        if type(n) is not int:
            raise StudentError(f"len({self._label}) did not return an int")
        return n

    def __iter__(self):  # noqa: ANN204 - a generator of remote values
        self._check_alive()
        it = self._ctx.request("iter", target=self._ref.id, label=f"iter({self._label})")
        while True:
            step = self._ctx.request("next", target=it._ref.id, label=f"next(iter({self._label}))")
            if not isinstance(step, dict) or step.get("done"):
                return
            yield step.get("value")

    def __repr__(self) -> str:
        return f"<sandbox {self._ref.type} object {self._label}>"


_PROBE_NAMES: dict[tuple[str, int], set[str]] = {}


def probe_names(path: Path | None) -> set[str]:
    """The probes a probes.py defines (its public top-level functions), read in the judge."""
    import ast

    if path is None or not path.is_file():
        return set()
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _PROBE_NAMES:
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            return set()
        _PROBE_NAMES[key] = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                             and not n.name.startswith("_")}
    return _PROBE_NAMES[key]


# The end of a missing-name message when no cell of the submission defines the name. ``check()`` in Jupyter
# (autograder.checker) recognises it: there the submission is the cells the kernel has run, and a cell the
# kernel has not run may define the name.
NO_CELL_DEFINES = " No cell of your submission defines it (check the spelling)."


class StudentProxy:
    """The ``student`` fixture: ``student.f(x)`` runs ``f`` in the sandbox."""

    def __init__(self, ctx: Context) -> None:
        object.__setattr__(self, "_ctx", ctx)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._ctx.getattr(None, name, name)

    def call_detailed(self, name: str, *args: Any, **kwargs: Any) -> Call:
        out = self._ctx.call(None, name, args, kwargs, name, detailed=True)
        if not isinstance(out, dict):
            raise StudentCrash("the sandbox returned a malformed detailed call result")
        return Call(out.get("value"), list(out.get("args") or []), dict(out.get("kwargs") or {}))


class SandboxFixture:
    """The ``sandbox`` fixture: probes, references to importable objects, seeding."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def probe(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._ctx.probe(name, args, kwargs)

    def ref(self, path: str) -> Any:
        return self._ctx.request("ref", path=path, label=path)

    def peak_memory(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, int]:
        """Run a probe and measure, from outside the sandbox, the most memory it held beyond what it held before.

        ``(the probe's reply, bytes)``: the kernel's peak of the sandbox's cgroup during the call, less its
        usage as the call began. Student code cannot lower it, so points may rest on it (issue 43: "never the
        whole batch at once", "does not keep graphs alive"), on sizes where the difference is unmistakable.
        Where no cgroup holds the sandbox, nothing can be measured: a grader error (staff review), never a guess.
        """
        ctx = self._ctx
        assert ctx.session is not None, "no submission is being graded"
        _IN_SANDBOX_CALL[0] += 1
        try:
            ctx.session.ensure()
        finally:
            _IN_SANDBOX_CALL[0] -= 1
        sb = ctx.session.sandbox
        peak = sb.peak_memory() if sb is not None else None
        if peak is None:
            raise GraderError(f"probe {name!r} needs the sandbox's peak memory, and no cgroup holds this sandbox "
                              "(or its peak cannot be reset): the test's points are withheld for staff to review")
        try:
            value = ctx.probe(name, args, kwargs)
            growth = peak.growth()
        finally:
            peak.close()
        if growth is None:
            raise GraderError(f"probe {name!r}: the sandbox's peak memory could not be read after the call")
        return value, growth


    def seed(self, seed: int) -> None:
        self._ctx.request("seed", seed=int(seed), label="seed")

    def load_weights_only(self, data: bytes) -> tuple[Any, str | None]:
        """``torch.load(file, weights_only=True)`` of a file's bytes: ``(object, None)`` or ``(None, why)``.

        Never run in the judge: the archive's declared sizes are checked against
        the bytes, then a sandbox that never ran student code decodes it (one per submission)
        (:mod:`autograder.judge.archive`).
        """
        from autograder.judge.archive import load_weights_only

        return load_weights_only(self._ctx, data)

    def scratch_files(self, folder: str) -> dict[str, Any]:
        """The files in ``folder`` of the sandbox's scratch (a probe's ``mkdtemp`` there), read by the judge.

        ``{"files": {name: bytes}, "skipped": [why, ...]}``: listed and read from outside the
        student's processes (a descriptor the sandbox's init sent before any student code), never
        following links, each file and the total bounded. What the ranks wrote is thus never a
        listing or a read made beside student code.
        """
        s = self._ctx.session
        sb = s.sandbox if s else None
        if sb is None or not sb.alive:
            raise GraderError("scratch_files: no sandbox is running (call it right after the probe that wrote)")
        return sb.scratch_files(folder)

    def apart(self) -> contextlib.AbstractContextManager[None]:
        """``with sandbox.apart():`` the calls inside run in this submission's second sandbox.

        A process of its own that replayed the student's cells and the probes' loading, and ran
        nothing but what was asked of it inside ``apart()``: never anything of the first sandbox's
        (the usual one). Made at the first ``apart()`` and kept for the exercise's later ones, so an
        exercise that saves in one process and resumes in another (``save`` outside, ``resume``
        inside) pays for one more process, not one per resume. Both share the sandbox's memory limit.
        Use ``fresh()`` when the resumed process must also never have resumed anything before.
        """
        return self._ctx.apart()

    def fresh(self) -> None:
        """A new sandbox process that ran only the student's cells and the probes' loading.

        For experiments with student code on both sides of an event (save a
        checkpoint, then load it "after a restart"): only what the student's
        code legitimately produced (a returned value, a file's bytes) crosses.
        """
        self._ctx.fresh()

    @property
    def protections(self) -> dict[str, str]:
        s = self._ctx.session
        return dict(s.protections) if s else {}
