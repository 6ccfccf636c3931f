"""Collecting a suite, in one place: pytest's arguments, the markers, and which exercise and points a test has.

Grading (:mod:`autograder.judge.plugin`) and the authoring linter
(:mod:`autograder.authoring.lint`) both collect the hidden and public suites;
they must agree on what a test is worth, so both go through this module.
Per-test facts live in pytest's ``item.stash`` under the keys below.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

import autograder.judge.generated  # noqa: F401 - before any suite imports hypothesis: its plugins stay off
from autograder.assignment import SUITE_FILE_PATTERNS, Assignment, Exercise, is_suite_module
from autograder.judge.proxy import disarm_watchdog

EXERCISE = pytest.StashKey[Exercise]()  # the exercise whose folder holds the test
POINTS = pytest.StashKey[float | None]()  # @pytest.mark.points(n); None when the test has no (usable) mark
RULES = pytest.StashKey[tuple[str, ...] | None]()  # @pytest.mark.rules(...): the rules it checks; None: no mark
TRACEBACK = pytest.StashKey[str]()  # staff-only: the judge-side traceback of the test's first failure

HYPOTHESIS_PLUGIN = "hypothesispytest"  # Hypothesis's pytest11 entry point: the only installed plugin a judge loads

MARKERS = (
    "points(n): points the test is worth",
    "timeout(seconds): wall-clock limit of the test",
    "rules(*ids): the rules of the contract the test checks (ids from the exercise's [rules] and the "
    "assignment's [conventions]; validate's coverage)",
    "in_process: advice on a fact only the student's process reports; worth 0 points (issue 43: a point is "
    "awarded only for a fact the judge can verify); docs/threat-model.md lists them",
    "outside(how): the points rest on a measurement made outside the student's process (how: e.g. 'cgroup peak "
    "memory'); docs/threat-model.md lists them",
)


def register_markers(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def test_name(item: pytest.Item) -> str:
    """What students see: the first line of the test's docstring, else its name in words."""
    doc = getattr(getattr(item, "function", None), "__doc__", None)
    if doc and doc.strip():
        return doc.strip().splitlines()[0].strip()
    return item.name.removeprefix("test_").replace("_", " ")


def test_line(item: pytest.Item) -> int:
    return item.location[1] + 1 if item.location[1] is not None else 0


def classify(item: pytest.Item, assignment: Assignment) -> str | None:
    """Stash the test's exercise and points; returns a problem (the caller says where) or None.

    A test outside every exercise folder, or whose points mark is not a number, is a problem.
    A missing points mark is not one here: hidden suites need it, public ones do not (the caller says).
    """
    ex = assignment.by_test_path(Path(str(item.path)))
    item.stash[POINTS] = None
    item.stash[RULES] = None
    if ex is None:
        return f"{item.name} is not inside an exercise folder of {assignment.id}"
    item.stash[EXERCISE] = ex
    marks = list(item.iter_markers("rules"))
    item.stash[RULES] = tuple(dict.fromkeys(str(a) for m in marks for a in m.args)) if marks else None
    marker = item.get_closest_marker("points")
    if marker is not None and marker.args:
        try:
            item.stash[POINTS] = float(marker.args[0])
        except (TypeError, ValueError):
            return f"{item.name}: points({marker.args[0]!r}) is not a number"
    return None


def rules(item: pytest.Item) -> tuple[str, ...] | None:
    """The rule ids the test declares (None when it has no ``rules`` mark)."""
    return item.stash.get(RULES, None)


def points(item: pytest.Item) -> float:
    """The test's points (0 when it has none: public tests)."""
    return item.stash.get(POINTS, None) or 0.0


def pytest_args(files: Iterable[Path], course: Path, ini: Path, *, collect_only: bool = False,
                keyword: str | None = None) -> list[str]:
    """The one command line with which suites are collected and run (``keyword``: pytest's ``-k``)."""
    return [
        *map(str, files),
        "-c", str(ini),  # an empty ini: nothing from the course's or the cwd's configuration
        "--rootdir", str(course),
        "-p", "no:cacheprovider",
        "-p", "no:randomly",
        "-p", "no:logging",  # per-test log capture costs milliseconds per test, per submission
        "-p", "no:unraisableexception",  # two full gc.collect() per session: a second per `check`
        "--capture=sys",  # fd-level capture would dup2 three times per test
        "--assert=plain",  # no assertion rewriting: a failed assert shows its message only, never test code
        "--import-mode=importlib",
        "-o", "python_files=" + " ".join(SUITE_FILE_PATTERNS),
        "-p", "no:torchgrader",  # the staff's plain-pytest plugin (autograder.authoring.pytest_plugin) has no part here
        "-p", HYPOTHESIS_PLUGIN,  # the one installed plugin loaded (see no_plugin_autoload)
        "-q",
        *(["--collect-only"] if collect_only else []),
        *(["-k", keyword] if keyword else []),
    ]


def invoke_pytest(files: list[Path], course: Path, plugins: list[object], *,
                  collect_only: bool = False, keyword: str | None = None) -> tuple[int, str]:
    """Run pytest on ``files`` with ``plugins``; returns (exit code, pytest's own output)."""
    with tempfile.TemporaryDirectory(prefix="torchgrader-pytest-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n")
        sink = io.StringIO()
        forget_suite_modules()
        try:
            with no_plugin_autoload(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                code = pytest.main(pytest_args(files, course, ini, collect_only=collect_only, keyword=keyword),
                                   plugins=plugins)
        finally:
            forget_suite_modules()
            disarm_watchdog()  # however the run ended, no test's clock outlives it
    return int(code), sink.getvalue()


_PLUGIN_ENV = ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS")  # what no_plugin_autoload sets, then restores


@contextlib.contextmanager
def no_plugin_autoload() -> Iterator[None]:
    """For this call, pytest loads only the plugins on its command line and those the judge passes.

    No other installed package's pytest plugin, nor one named in the caller's ``PYTEST_PLUGINS``,
    takes part in grading: Hypothesis's (``-p``) says how a generated test failed, the others
    have nothing to do there, and loading them cost a quarter of a second of every judge's start
    (anyio's imports trio). Environment variables rather than ``--disable-plugin-autoload``
    (pytest 8.4): the package supports pytest 8.0, and pytest reads them while it parses arguments.
    """
    saved = {name: os.environ.get(name) for name in _PLUGIN_ENV}
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_PLUGINS", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def forget_suite_modules() -> None:
    """Drop imported suite modules so the next collection reads the files again.

    pytest's importlib mode names a suite module after its path under the
    course (``solutions.demo.basics.test_hidden``); a cached one from another
    course or an earlier version of the file would otherwise be reused.
    """
    for name in list(sys.modules):
        if is_suite_module(name):
            del sys.modules[name]
