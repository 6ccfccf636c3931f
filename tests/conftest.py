from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.sandbox.client import SandboxServer
from tests.helpers import DEMO_COURSE

# The demo course's suites are graded by the engine, never collected as the project's own tests.
collect_ignore = ["course"]

# Under `pytest -n 3` (pytest-xdist, as the README's test command runs): the tests that drive a container
# engine share one worker, one after another, since the engine fixture starts dockerd and stops it at the end
# of its session (tests/docker/conftest.py); every other file is one unit of work, so module fixtures (one
# grading shared by a file's tests) stay shared. The longest units are collected first, so that the two
# workers finish together rather than one waiting on a late long file.
ENGINE_FILES = ("tests/docker/", "tests/service/test_backends.py")
LONG_FIRST = ("tests/docker/", "tests/service/test_backends.py", "tests/test_course_regression.py",
              "tests/service/test_live.py", "tests/sandbox/test_exploits.py")


def _unit(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return "the container engine" if path.startswith(ENGINE_FILES) else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class OneUnitPerFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False  # keep LONG_FIRST's order, not "most tests first"
    return OneUnitPerFile(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, p in enumerate(LONG_FIRST) if path.startswith(p)), len(LONG_FIRST))

    items.sort(key=rank)  # stable: within a unit, the file's own order


@pytest.fixture(scope="session")
def server():
    """One warm sandbox server for the whole test run (it imports torch once)."""
    with SandboxServer() as s:
        yield s


@pytest.fixture(scope="session")
def demo():
    return load_assignment("demo", DEMO_COURSE)
