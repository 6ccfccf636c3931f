from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.sandbox.client import SandboxServer
from tests.helpers import DEMO_COURSE


@pytest.fixture(scope="session")
def server():
    """One warm sandbox server for the whole test run (it imports torch once)."""
    with SandboxServer() as s:
        yield s


@pytest.fixture(scope="session")
def demo():
    return load_assignment("demo", DEMO_COURSE)
