from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.sandbox.client import SandboxServer
from tests.helpers import DEMO_COURSE

# The demo course's suites are graded by the engine, never collected as the project's own tests.
collect_ignore = ["course"]


@pytest.fixture(scope="session")
def server():
    """One warm sandbox server for the whole test run (it imports torch once)."""
    with SandboxServer() as s:
        yield s


@pytest.fixture(scope="session")
def demo():
    return load_assignment("demo", DEMO_COURSE)
