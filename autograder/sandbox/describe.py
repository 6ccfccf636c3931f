"""A failure inside the sandbox as plain data: what the judge may show, trimmed to the student's cells.

Shared by the runtime and the rank helpers (each rank describes its own
exceptions the same way), so it sits below both.
"""

from __future__ import annotations

import linecache
import re
from typing import Any

from autograder.errors import MissingName
from autograder.sandbox import wire

MAX_MESSAGE = 2000
CELL_PREFIX = "<cell "


def _truncate(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 20] + " ... [truncated]"


def _safe_str(exc: BaseException) -> str:
    try:
        return _truncate(str(exc), MAX_MESSAGE)
    except BaseException:  # a student exception whose __str__ itself fails
        return "<the exception's message could not be shown>"


def _cell_of(filename: str) -> int | None:
    if filename.startswith(CELL_PREFIX) and filename.endswith(">"):
        try:
            return int(filename[len(CELL_PREFIX) : -1])
        except ValueError:
            return None
    return None


# Exception kinds that a student's value cannot provoke inside grader code: raised with no
# student frame in their chain, they are the grader's own failure (a probe that cannot import
# what it needs, a misspelt name), never the student's mistake.
_GRADER_BUG_TYPES = (ImportError, NameError, SyntaxError)


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and not any(x is e for x in out) and len(out) < 16:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


# A traceback that crossed a process as text (a DataLoader worker's exception, re-raised by torch as
# "Caught NameError in DataLoader worker process 0. Original Traceback ...") names its cells only there.
_CELL_IN_TEXT = re.compile(r'File "' + re.escape(CELL_PREFIX) + r'\d+>"')


def _has_student_frame(exc: BaseException) -> bool:
    for e in _chain(exc):
        if _CELL_IN_TEXT.search(_safe_str(e)):
            return True
        tb = e.__traceback__
        while tb is not None:
            if _cell_of(tb.tb_frame.f_code.co_filename) is not None:
                return True
            tb = tb.tb_next
    return False


def grader_fault(exc: BaseException) -> bool:
    """True when a probe's exception is the grader's own bug, not something the student caused."""
    if _has_student_frame(exc):
        return False
    return any(isinstance(e, _GRADER_BUG_TYPES) for e in _chain(exc))


def describe_exception(exc: BaseException, origin: str = "student") -> dict[str, Any]:
    """A student exception as plain data, its traceback trimmed to the student's cells.

    ``frames`` lists [cell, line, function, code] for the student's own frames
    only: the judge formats them, and library internals never reach a student.
    ``origin`` is "grader" for a failure of the grader's own code (see
    :func:`grader_fault`); the judge then reports a grader error, never the
    student's mistake.
    """
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        cell = _cell_of(code.co_filename)
        if cell is not None:
            line = linecache.getline(code.co_filename, tb.tb_lineno)
            name = getattr(code, "co_qualname", code.co_name)
            frames.append([cell, tb.tb_lineno, name, _truncate(line.strip(), 200)])
        tb = tb.tb_next
    message = _safe_str(exc)
    kind = "exception"
    if isinstance(exc, MissingName):
        kind, message = "missing_name", exc.name or ""
    elif isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and ("can't allocate memory" in message or "DefaultCPUAllocator" in message)
    ):
        kind = "memory"
    elif isinstance(exc, wire.Unencodable):
        kind = "encoding"
    if isinstance(exc, SyntaxError) and (cell := _cell_of(exc.filename or "")) is not None:
        frames = [[cell, exc.lineno, "<module>", _truncate((exc.text or "").strip(), 200)]]
        message = exc.msg
    return {"kind": kind, "type": type(exc).__name__, "message": message, "frames": frames[-8:], "origin": origin}
