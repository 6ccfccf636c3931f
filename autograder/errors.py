"""Every exception the project defines, under one base, and the one table of what each one means.

Code that reports an error prints ``e.message`` as it is (it names the file,
cell, exercise or test, and says what to do); code that must react to a kind
of error catches its class. Nothing matches on an error's text. :data:`TABLE`
says, for each class, the status a test that raised it gets (the judge's
plugin reads it), the exit code of a command it stops (``cli.main`` reads it)
and who reads its message; docs/errors.md lists it for people.

The tree (a class whose builtin base matters keeps it beside ours)::

    TorchgraderError
    ├── StudentFacingError ........ the message goes to a student as it is
    │   ├── LoadError ............. the file cannot be read as a submission
    │   ├── StudentProblem ........ the student's code, seen from a test (proxy)
    │   │   ├── StudentNameMissing
    │   │   ├── StudentNotImplemented
    │   │   ├── StudentError
    │   │   ├── StudentCrash
    │   │   └── StudentOverTime ... status "timeout" (also importable as proxy.StudentTimeout)
    │   │       └── JudgeOvertime . the judge's own checks ran the test over its time
    │   ├── Failure (+AssertionError)  a suite's check failed: judge.feedback raises it
    │   ├── Unencodable ........... a value that may not cross the wire (a WireError too)
    │   ├── SubmitError ........... `torchgrader submit` / submit(): did not work
    │   │   ├── SubmitRefused ..... the service refused it (exit 3)
    │   │   ├── ServiceUnreachable  no torchgrader service at that address (exit 4)
    │   │   └── SubmitUnauthorized  the token is wrong, expired or revoked (exit 6)
    │   └── RequestRefused ........ the web service answers a request with a message (4xx/503)
    │       └── LaunchRefused ..... an LMS's LTI launch refused before anything is stored
    ├── SandboxError .............. the sandbox's side of one request (the proxy turns each into a StudentProblem)
    │   ├── StudentException ...... student code raised; ``error`` is the sandbox's plain-data description
    │   ├── SandboxNoReply ........ no reply in time: the sandbox was killed (also client.SandboxTimeout)
    │   ├── SandboxCrashed
    │   │   └── SandboxOutOfMemory
    │   └── ProtocolError
    │       └── ReplyTooLarge
    ├── WireError ................. a message malformed, too large, or holding what may not cross
    │   └── Unencodable
    ├── RecvDeadlinePassed ........ no whole frame arrived before the deadline
    ├── PeerClosed ................ the other end of the socket closed (the sandbox died)
    ├── SetupRefused .............. a sandbox set-up step the kernel refused (plain strings: it crosses processes)
    ├── IsolationError (+OSError) . a namespace or mount call the kernel refused
    ├── FilterError (+OSError) .... the kernel or libseccomp refused the seccomp filter
    ├── MissingName (+AttributeError)  the student's namespace has no such name (sandbox side)
    ├── GraderError ............... the grader's own code failed: status "grader_error", never the student's
    │   └── SuiteError ............ a hidden test asks for what the grader cannot do (the staff's mistake)
    ├── WorkerDied ................ a batch worker stopped while grading a job (the job may be retried)
    └── StaffError ................ course staff or TAs: the material or the set-up is wrong
        ├── OutputFolderError ..... a folder the command must write cannot be made or written
        ├── AssignmentError ....... an assignment's files are wrong (the message names the file)
        │   ├── SuiteProblems ..... the suites cannot be collected: nothing can be graded
        │   └── ChangeMismatch .... a change mutant's hunks no longer fit its reference
        ├── BatchError ............ the batch cannot go on
        ├── WorkerFatal ........... no worker can grade anything
        ├── NbgraderError ......... nbgrader's gradebook cannot take the scores
        ├── ConfigError ........... the service's config file is wrong
        ├── RosterError ........... the roster file cannot be read
        ├── StoreDamaged .......... the service's store cannot be opened or fails its integrity check
        ├── LmsError .............. a call to the LMS (LTI services, registration) failed; the dashboard says it
        └── ServerFailed (+RuntimeError)  the sandbox server could not start or has exited: nothing is graded
            └── SandboxCannotStart  a sandbox never reported ready (its set-up was refused)

    BatchInterrupted (KeyboardInterrupt, not under the base: ``except Exception`` must not stop a Ctrl-C)

Private control-flow signals stay beside the code that raises and catches them
(tests/test_errors.py holds this list to the code):

- ``sandbox.server._Stop`` (a BaseException): the judge closed the server while it was still importing
  torch; unwinds the import from a signal handler, past any ``except Exception``.
- ``sandbox.runtime._GraderFault``: wraps, inside the sandbox, an exception of the grader's own probe or
  runtime so that it is described as the grader's, never the student's.
- ``batch.inputs._TooBig``: stops unpacking an archive member that goes over the size cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal

Audience = Literal["student", "TA", "staff"]
# What a test that raised it is reported as: one of results.TestStatus, or "stop": no result at all,
# the run stops (the judge re-raises it; grading on without a sandbox server would give zeros that are nobody's).
Status = Literal["failed", "error", "timeout", "grader_error", "stop"]


class Exit(IntEnum):
    """The exit codes of every ``torchgrader`` command (stable: scripts rely on them; docs/errors.md)."""

    OK = 0  # done (submit: accepted; with --wait, graded)
    NO = 1  # done, and the answer is no: a test failed (check, try), the material or a suite has problems (validate)
    ERROR = 2  # stopped by an error, said in one sentence (a wrong option, file or folder, material, the host)
    REFUSED = 3  # submit: the service refused the file (the message says why)
    UNREACHABLE = 4  # submit: no torchgrader service at that address
    GRADER_FAILED = 5  # submit --wait: the grader failed on the submission (staff will look)
    UNAUTHORIZED = 6  # submit: the token is not valid
    INTERRUPTED = 130  # Ctrl-C: what was stored is kept


class TorchgraderError(Exception):
    """Base of every deliberate error; ``message`` is written for its :attr:`audience`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def audience(self) -> Audience:
        return meaning(self).audience


# ---------------------------------------------------------------------- for students
class StudentFacingError(TorchgraderError):
    """The message goes to a student as it is: what went wrong with their submission and what to do."""


class LoadError(StudentFacingError):
    """The file cannot be read as a submission; the message is for the student."""


class StudentProblem(StudentFacingError):
    """A problem on the student's side, seen from a test; its status is :data:`TABLE`'s.

    ``cause``: the part of the message other tests share (a cell that did not run), "" when none.
    """

    cause: str = ""


class StudentNameMissing(StudentProblem):
    """The test calls a name the student's code does not define."""


class StudentNotImplemented(StudentProblem):
    """The function is still the stub (it raises NotImplementedError)."""


class StudentError(StudentProblem):
    """The student's code raised, returned what cannot be used, or went over a memory limit."""


class StudentCrash(StudentProblem):
    """The student's process died (or its reply could not be read) during the test."""


class StudentOverTime(StudentProblem):
    """The student's code ran past the test's time limit (a test status "timeout")."""


class JudgeOvertime(StudentOverTime):
    """The test's own time ran out while the judge itself was working (the watchdog's alarm)."""


class Failure(StudentFacingError, AssertionError):
    """A failed check; its message is shown to the student as is.

    ``misconception`` is the key of the misconception the evidence fits (or
    ""): ``validate`` compares it with the key each mutant declares, so a
    message that blames the wrong cause fails the suite, not the student.
    Staff suites raise it through ``autograder.judge.feedback``.
    """

    def __init__(self, message: str, misconception: str = "") -> None:
        super().__init__(message)
        self.misconception = misconception


class SubmitError(StudentFacingError):
    """Submitting to the course's service did not work (its subclass says how)."""

    def __init__(self, message: str, retry_after: int | None = None, status: int = 0) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status  # the server's HTTP status (0: none came back)

    @property
    def busy(self) -> bool:
        """The grader's queue is full for now (503 with Retry-After): trying again later helps."""
        return self.status == 503 and bool(self.retry_after)


class SubmitRefused(SubmitError):
    """The service refused the file, or it cannot be read (the message says why)."""


class ServiceUnreachable(SubmitError):
    """No torchgrader service answers at that address, or it gave no result in time."""


class SubmitUnauthorized(SubmitError):
    """The service does not accept the token."""


class RequestRefused(StudentFacingError):
    """A web request answered with a message instead of what it asked for (``status``: 4xx or 503)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class LaunchRefused(RequestRefused):
    """An LMS's LTI launch refused before anything is stored; the page says what was wrong (signature, nonce,
    audience, deployment, state, role)."""

    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(status, message)


# ---------------------------------------------------------------------- the sandbox and the wire
class SandboxError(TorchgraderError):
    """Something went wrong on the sandbox side of a request."""


class StudentException(SandboxError):
    """Student code raised; ``error`` is the sandbox's plain-data description."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error if isinstance(error, dict) else {"message": str(error)}
        super().__init__(str(self.error.get("message", "")))

    @property
    def kind(self) -> str:
        return str(self.error.get("kind", "exception"))


class SandboxNoReply(SandboxError):
    """No reply before the deadline; the sandbox has been killed."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no reply within {seconds:.1f} s")
        self.seconds = seconds


class SandboxCrashed(SandboxError):
    """The sandbox process went away (exit, crash, kill) mid-request."""


class SandboxOutOfMemory(SandboxCrashed):
    """The sandbox's cgroup hit its memory limit: the kernel killed a process in it, or it sat at the limit
    when its time ran out."""


class ProtocolError(SandboxError):
    """The sandbox replied with something that is not a valid reply."""


class ReplyTooLarge(ProtocolError):
    """Decoding the sandbox's reply went over the judge's own memory limit."""


class WireError(TorchgraderError):
    """A message that is malformed, too large, or holds something that may not cross."""


class Unencodable(WireError, StudentFacingError):
    """A value that may not cross the boundary, with a message for the student."""


class RecvDeadlinePassed(TorchgraderError):
    """No complete message arrived before the deadline."""

    def __init__(self, message: str = "no complete message before the deadline") -> None:
        super().__init__(message)


class PeerClosed(TorchgraderError):
    """The other side closed the connection (in the sandbox's case: it died)."""

    def __init__(self, message: str = "the other side closed the connection") -> None:
        super().__init__(message)


class SetupRefused(TorchgraderError):
    """A set-up step of a sandbox that the kernel refused: ``step`` names it, ``reason`` is the kernel's words.

    Plain strings only: it crosses from the sandbox to the judge (server.py) and from the probe to
    the worker, and is turned into the message that says what to do (``preflight.advice``).
    """

    def __init__(self, step: str, reason: str, err: int = 0) -> None:
        super().__init__(f"{step}: {reason}")
        self.step, self.reason, self.errno = step, reason, err


class IsolationError(TorchgraderError, OSError):
    """A namespace or mount step the kernel refused (an OSError: ``errno``, then the words)."""

    def __init__(self, *args: Any) -> None:
        OSError.__init__(self, *args)
        self.message = str(self)


class FilterError(TorchgraderError, OSError):
    """The kernel (or libseccomp) refused the filter (an OSError: ``errno``, then the words)."""

    def __init__(self, *args: Any) -> None:
        OSError.__init__(self, *args)
        self.message = str(self)


class MissingName(TorchgraderError, AttributeError):
    """The student's namespace has no such name (an AttributeError, as ``getattr`` callers expect)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


# ---------------------------------------------------------------------- the grader's own
class GraderError(TorchgraderError):
    """The grader's own code (a probe, the runtime, a missing probe) failed: never the student's mistake.

    The plugin reports it as status ``grader_error``: the test's points are
    withheld from the maximum, the submission is listed for staff, and the
    student is told it costs them nothing.
    """

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class SuiteError(GraderError):
    """A hidden test asks for something the grader cannot do: the staff's mistake, named for the staff.

    An argument that cannot cross to the sandbox (a judge-side lambda, a model
    built in the judge) or a probe name that does not exist. Like every
    :class:`GraderError` it never costs the student; ``validate`` fails on it,
    naming the test.
    """


class WorkerDied(TorchgraderError):
    """A worker stopped (or could not start) while grading a job; the job may be retried once."""


# ---------------------------------------------------------------------- for staff and TAs
class StaffError(TorchgraderError):
    """For course staff or TAs: the material or the set-up is wrong (the message names the file)."""


class OutputFolderError(StaffError):
    """A folder or file the command must write cannot be made or written (the message names it and the option)."""


class AssignmentError(StaffError):
    """Authoring mistake in an assignment's files; the message names the file."""


class SuiteProblems(AssignmentError):
    """The assignment's suites cannot be collected or are incomplete: no submission can be graded."""


class ChangeMismatch(AssignmentError):
    """A change mutant whose hunks no longer fit its reference (or cannot be read): an authoring error.

    ``path``, ``line`` and ``detail`` let validate's static pass list it with the other problems.
    """

    def __init__(self, path: Path, line: int | None, detail: str) -> None:
        self.path, self.line, self.detail = path, line, detail
        super().__init__(f"{path}:{line}: {detail}" if line else f"{path}: {detail}")


class BatchError(StaffError):
    """The batch cannot go on (no worker can grade: suites broken, engine missing, scheduler unreachable)."""


class WorkerFatal(StaffError):
    """No worker can grade anything (the assignment's suites cannot run, the engine is missing)."""


class NbgraderError(StaffError):
    """nbgrader's gradebook cannot take the scores (the message says which record and why)."""


class ConfigError(StaffError):
    """The service's config file is wrong; the message names the file and the key."""


class StoreDamaged(StaffError):
    """The service's SQLite store cannot be opened, or fails its integrity check: the service does not start on it."""


class RosterError(StaffError):
    """The roster file cannot be read; the message names the file and the row."""


class LmsError(StaffError):
    """A call to the LMS (an LTI service token, the roster, line items, scores, keys, registration) failed;
    ``answer`` is what the LMS said, or why there was no answer. Shown to staff on the dashboard."""

    def __init__(self, answer: str) -> None:
        super().__init__(answer)
        self.answer = answer


class ServerFailed(StaffError, RuntimeError):
    """The sandbox server could not start, or has exited: nothing can be graded with it."""


class SandboxCannotStart(ServerFailed):
    """A sandbox never reported ready: its set-up was refused, or it died before any student code ran.

    Never a student's fault and never a grade: grading stops before the result is stored
    (the plugin re-raises it; ``grade``, ``check`` and ``try`` exit non-zero, a batch worker
    ends as fatal). ``step`` is the refused set-up step, ``reason`` the kernel's words,
    ``traceback`` the sandbox's own (for the worker log).
    """

    def __init__(self, message: str, *, step: str = "", reason: str = "", traceback: str = "") -> None:
        super().__init__(message)
        self.step, self.reason, self.traceback = step, reason, traceback


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a batch, after the partial outputs were written and the way to finish was said."""

    said = True  # the CLI adds nothing


# ---------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Meaning:
    """What an error means: a test's status, a command's exit code, who reads its message."""

    status: Status
    exit: Exit
    audience: Audience


def _m(status: Status, exit: Exit, audience: Audience) -> Meaning:
    return Meaning(status, exit, audience)


# One row per class defined above (tests/test_errors.py checks it); a class without a row of its own
# means what its nearest listed base means. The builtin rows are what the judge makes of a test that
# raised something of no project's: a bare assert is a failed check, anything else the student's error.
TABLE: dict[type[BaseException], Meaning] = {
    TorchgraderError: _m("grader_error", Exit.ERROR, "staff"),
    StudentFacingError: _m("error", Exit.ERROR, "student"),
    LoadError: _m("error", Exit.ERROR, "student"),
    StudentProblem: _m("error", Exit.ERROR, "student"),
    StudentNameMissing: _m("error", Exit.ERROR, "student"),
    StudentNotImplemented: _m("error", Exit.ERROR, "student"),
    StudentError: _m("error", Exit.ERROR, "student"),
    StudentCrash: _m("error", Exit.ERROR, "student"),
    StudentOverTime: _m("timeout", Exit.ERROR, "student"),
    JudgeOvertime: _m("timeout", Exit.ERROR, "student"),
    Failure: _m("failed", Exit.NO, "student"),
    SubmitError: _m("error", Exit.REFUSED, "student"),
    SubmitRefused: _m("error", Exit.REFUSED, "student"),
    ServiceUnreachable: _m("error", Exit.UNREACHABLE, "student"),
    SubmitUnauthorized: _m("error", Exit.UNAUTHORIZED, "student"),
    RequestRefused: _m("error", Exit.REFUSED, "student"),
    LaunchRefused: _m("error", Exit.REFUSED, "student"),
    SandboxError: _m("error", Exit.ERROR, "student"),
    StudentException: _m("error", Exit.ERROR, "student"),
    SandboxNoReply: _m("timeout", Exit.ERROR, "student"),
    SandboxCrashed: _m("error", Exit.ERROR, "student"),
    SandboxOutOfMemory: _m("error", Exit.ERROR, "student"),
    ProtocolError: _m("error", Exit.ERROR, "student"),
    ReplyTooLarge: _m("error", Exit.ERROR, "student"),
    WireError: _m("error", Exit.ERROR, "student"),
    Unencodable: _m("error", Exit.ERROR, "student"),
    RecvDeadlinePassed: _m("timeout", Exit.ERROR, "student"),
    PeerClosed: _m("error", Exit.ERROR, "student"),
    SetupRefused: _m("grader_error", Exit.ERROR, "TA"),
    IsolationError: _m("grader_error", Exit.ERROR, "TA"),
    FilterError: _m("grader_error", Exit.ERROR, "TA"),
    MissingName: _m("error", Exit.ERROR, "student"),
    GraderError: _m("grader_error", Exit.ERROR, "staff"),
    SuiteError: _m("grader_error", Exit.ERROR, "staff"),
    WorkerDied: _m("grader_error", Exit.ERROR, "TA"),
    StaffError: _m("grader_error", Exit.ERROR, "staff"),
    OutputFolderError: _m("grader_error", Exit.ERROR, "TA"),
    AssignmentError: _m("grader_error", Exit.ERROR, "staff"),
    ChangeMismatch: _m("grader_error", Exit.ERROR, "staff"),
    SuiteProblems: _m("grader_error", Exit.ERROR, "staff"),
    BatchError: _m("grader_error", Exit.ERROR, "TA"),
    WorkerFatal: _m("grader_error", Exit.ERROR, "TA"),
    NbgraderError: _m("grader_error", Exit.ERROR, "TA"),
    ConfigError: _m("grader_error", Exit.ERROR, "staff"),
    RosterError: _m("grader_error", Exit.ERROR, "staff"),
    StoreDamaged: _m("grader_error", Exit.ERROR, "staff"),
    LmsError: _m("grader_error", Exit.ERROR, "staff"),
    ServerFailed: _m("stop", Exit.ERROR, "TA"),
    SandboxCannotStart: _m("stop", Exit.ERROR, "TA"),
    BatchInterrupted: _m("stop", Exit.INTERRUPTED, "TA"),
    # builtins, as the judge and the CLI meet them
    KeyboardInterrupt: _m("stop", Exit.INTERRUPTED, "TA"),
    AssertionError: _m("failed", Exit.NO, "student"),
    OSError: _m("error", Exit.ERROR, "TA"),
    BaseException: _m("error", Exit.ERROR, "student"),
}


def meaning(error: BaseException | type[BaseException]) -> Meaning:
    """The row of ``error``'s class, or of its nearest base that has one."""
    cls = error if isinstance(error, type) else type(error)
    return next(TABLE[c] for c in cls.__mro__ if c in TABLE)
