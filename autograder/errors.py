"""The errors the grader raises on purpose: one base, and each subclass says whom its message is for.

Code that reports an error prints ``e.message`` as it is (it names the file,
cell, exercise or test, and says what to do); code that must react to a kind
of error catches its class. Nothing matches on an error's text.
"""

from __future__ import annotations

from typing import ClassVar, Literal

Audience = Literal["student", "staff"]


class TorchgraderError(Exception):
    """Base of every deliberate error; ``message`` is written for ``audience``."""

    audience: ClassVar[Audience] = "staff"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StudentFacingError(TorchgraderError):
    """The message goes to a student as it is: what went wrong with their submission and what to do."""

    audience: ClassVar[Audience] = "student"


class StaffError(TorchgraderError):
    """For course staff or TAs: the material or the set-up is wrong (the message names the file)."""


class OutputFolderError(StaffError):
    """A folder or file the command must write cannot be made or written (the message names it and the option)."""

