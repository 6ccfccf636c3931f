"""Hidden and public suites under plain pytest, against one case: the staff's inner loop.

Installed as the pytest plugin ``torchgrader`` (``[project.entry-points.pytest11]``;
without the install, add ``-p autograder.authoring.pytest_plugin``)::

    pytest solutions/pytorch-fundamentals/views/test_hidden.py --against reference
    pytest solutions/pytorch-fundamentals/views/test_hidden.py --against mutants/flatten_view.py -x --pdb
    pytest assignments/pytorch-fundamentals/views/public_test.py --against stub -k shape

``--against`` takes what ``torchgrader try`` takes (reference, stub,
alternatives/NAME.py, mutants/NAME.py, a path); when every path given is a
course suite it defaults to ``reference``. The submission is composed as
``validate`` composes it and runs in the real sandbox; the tests run in this
pytest process (the judge), so ``-k``, ``-x``, ``--pdb`` and breakpoints work
in test code. Under each failing test pytest shows a section "what a student
reads" with the message grading would give.

The plugin does nothing unless it is asked to: it is inert in the project's
own test runs and in grading (which passes ``-p no:torchgrader``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from autograder.assignment import HIDDEN_TESTS, PUBLIC_TESTS, SUITE_NAMES, CourseDir, suite_owner


def _default_case() -> str:
    """The case a course suite runs against without ``--against``: ``torchgrader try``'s default."""
    from autograder.authoring.trial import try_case
    from autograder.defaults import default_of

    return str(default_of(try_case, "against"))


def pytest_addoption(parser: pytest.Parser) -> None:
    from autograder.authoring.trial import CASES

    group = parser.getgroup("torchgrader", "torchgrader: run an exercise's suite against one case")
    group.addoption(
        "--against",
        default=None,  # None: not asked for (the plugin stays inert unless the paths are course suites)
        metavar="CASE",
        help=f"grade the suite against {CASES} (default for a course suite: {_default_case()})",
    )


def _suites(config: pytest.Config) -> list[tuple[Path, str, str]]:
    found = []
    for arg in config.args:
        p = Path(str(arg).split("::", 1)[0])
        if p.is_dir():
            # A folder counts only when every test file in it is a course suite: the project's own
            # `pytest` (testpaths = tests/, which holds a test course) must not turn into a judge run.
            files = [f for f in sorted(p.rglob("*.py")) if f.name.startswith("test_") or f.name.endswith("_test.py")
                     or f.name in SUITE_NAMES]
            suites = [suite_owner(f) for f in files]
            if not files or None in suites:
                return []
            found += [s for s in suites if s is not None]
        elif (s := suite_owner(p)) is not None:
            found.append(s)
        else:
            return []  # something that is not a course suite: leave the run alone
    return found


def pytest_configure(config: pytest.Config) -> None:
    against = config.getoption("against", None)
    suites = _suites(config)
    if against is None and not suites:
        return
    if not suites:
        raise pytest.UsageError(
            f"--against needs the path of an exercise's {HIDDEN_TESTS} or {PUBLIC_TESTS} "
            f"({CourseDir(Path('')).hidden('<assignment>') / '<exercise>' / HIDDEN_TESTS})"
        )
    courses = {(c, a) for c, a, _ in suites}
    exercises = sorted({e for _, _, e in suites})
    if len(courses) > 1:
        raise pytest.UsageError("--against: give suites of one assignment at a time")
    against = against or _default_case()
    if against not in ("reference", "stub") and len(exercises) > 1:
        raise pytest.UsageError(
            f"--against {against}: a case file belongs to one exercise; give only its suite "
            f"(got {', '.join(exercises)})"
        )
    ((course, assignment_id),) = courses
    config.pluginmanager.import_plugin("autograder.judge.plugin")  # the student/sandbox fixtures
    config.pluginmanager.register(AgainstCase(course, assignment_id, exercises, against), "torchgrader-local")


class AgainstCase:
    """One composed submission in one sandbox session, for every test pytest runs."""

    def __init__(self, course: Path, assignment_id: str, exercises: list[str], against: str) -> None:
        from autograder.assignment import load_assignment

        self.assignment = load_assignment(assignment_id, course, need_hidden=False)
        self.exercises = exercises
        self.against = against
        self.session: Any = None
        self.server: Any = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        from autograder.judge import collect

        collect.register_markers(config)

    def pytest_report_header(self, config: pytest.Config) -> str:
        return (
            f"torchgrader: {self.assignment.id} / {', '.join(self.exercises)} against {self.against} "
            "(composed as validate does; student code runs in the sandbox)"
        )

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        from autograder.judge import collect

        for item in items:
            collect.classify(item, self.assignment)  # the exercise (timeout, probes) and points, in item.stash

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        if session.items and not (session.config.option.collectonly or session.testsfailed):
            self._start()
        try:
            return (yield)
        finally:
            self._stop()

    def _start(self) -> None:
        from autograder.authoring.trial import compose_case
        from autograder.judge.plugin import CONTEXT
        from autograder.judge.proxy import strip_source
        from autograder.load import load
        from autograder.sandbox.client import SandboxConfig, SandboxServer
        from autograder.session import Session

        self._tmp = tempfile.TemporaryDirectory(prefix="torchgrader-pytest-")
        dest = Path(self._tmp.name) / "submission.py"
        if self.against in ("reference", "stub") and len(self.exercises) > 1:
            from autograder.authoring.cases import compose

            compose(self.assignment, {}, dest, stubs=tuple(self.exercises) if self.against == "stub" else ())
        else:
            compose_case(self.assignment, self.exercises[0], self.against, dest)
        probes = {}
        for ex in self.assignment.exercises:
            if ex.id in self.exercises and ex.probes.is_file():
                probes[ex.id] = strip_source(ex.probes.read_text())
        config = SandboxConfig(protected=[str(CourseDir(self.assignment.course).hidden()), self._tmp.name])
        self.server = SandboxServer()
        self.session = Session(self.server, load(dest), config, probes=probes)
        CONTEXT.session = self.session

    def _stop(self) -> None:
        from autograder.judge.plugin import CONTEXT

        CONTEXT.session = None
        if self.session is not None:
            self.session.close()
        if self.server is not None:
            self.server.close()
        if self._tmp is not None:
            self._tmp.cleanup()
        self.session = self.server = self._tmp = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        report = yield
        if call.excinfo is not None and report.failed:
            from autograder.errors import GraderError
            from autograder.judge.collect import test_name
            from autograder.judge.plugin import outcome, with_sentence

            exc = call.excinfo.value
            from autograder.judge.collect import EXERCISE

            ex = item.stash.get(EXERCISE, None)
            status, message, key = outcome(exc, test_name(item), ex.id if ex else "")
            message = with_sentence(message, key, getattr(item, "module", None))
            extra = f"\n[misconception: {key}]" if key else ""
            if isinstance(exc, GraderError):
                extra += f"\n[staff: {exc.detail}]"
            report.sections.append(("what a student reads", f"{status}: {message}{extra}"))
        return report
