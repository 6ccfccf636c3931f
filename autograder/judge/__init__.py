"""What hidden and public suites import: fixtures live in the plugin, helpers here.

The problems a test meets are defined in autograder/errors.py (the one tree) and re-exported here, each
marked as such (``X as X``), for staff suites, which catch them by these names. The project's own code
imports every name from the module that defines it, never through this package (tests/test_import_graph.py).
"""

from autograder.errors import Failure as Failure
from autograder.errors import StudentCrash as StudentCrash
from autograder.errors import StudentError as StudentError
from autograder.errors import StudentNameMissing as StudentNameMissing
from autograder.errors import StudentNotImplemented as StudentNotImplemented
from autograder.errors import StudentOverTime as StudentOverTime
from autograder.errors import StudentProblem as StudentProblem
from autograder.judge.conventions import as_found
from autograder.judge.feedback import (
    assert_close,
    check,
    describe,
    fail,
    gradcheck,
    passed,
    quote,
    remote_meta,
    review,
    shares_storage,
    within,
)
from autograder.judge.proxy import Call, Handle, StudentTimeout
from autograder.judge.ranks import group_left_alive, rank_values, ranks_timeout
from autograder.sandbox.seeding import manual_seed

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
    "as_found",
    "assert_close",
    "check",
    "describe",
    "fail",
    "gradcheck",
    "group_left_alive",
    "manual_seed",
    "passed",
    "quote",
    "rank_values",
    "ranks_timeout",
    "remote_meta",
    "review",
    "shares_storage",
    "within",
]
