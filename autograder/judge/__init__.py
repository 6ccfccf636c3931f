"""What hidden and public suites import: fixtures live in the plugin, helpers here."""

from autograder.judge.feedback import (
    Failure,
    assert_close,
    check,
    describe,
    fail,
    gradcheck,
    remote_meta,
    shares_storage,
    within,
)
from autograder.judge.proxy import (
    Call,
    Handle,
    StudentCrash,
    StudentError,
    StudentNameMissing,
    StudentNotImplemented,
    StudentOverTime,
    StudentProblem,
    StudentTimeout,
)
from autograder.judge.ranks import group_left_alive, rank_values, ranks_timeout

__all__ = [
    "Call",
    "Failure",
    "Handle",
    "StudentCrash",
    "StudentError",
    "StudentNameMissing",
    "StudentNotImplemented",
    "StudentOverTime",
    "StudentProblem",
    "StudentTimeout",
    "assert_close",
    "check",
    "describe",
    "fail",
    "gradcheck",
    "group_left_alive",
    "rank_values",
    "ranks_timeout",
    "remote_meta",
    "shares_storage",
    "within",
]
