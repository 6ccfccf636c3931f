"""One error tree: every exception is defined in autograder/errors.py, and one table says what each means.

The classes are found in the source with ``ast`` (``__subclasses__()`` would miss exactly the
classes that stand outside the tree); the table is held to docs/errors.md, and the judge's
outcome and the CLI's exit codes are checked to come from it.
"""

from __future__ import annotations

import ast
import builtins
import re

import pytest

from autograder import errors
from tests.helpers import DEMO_COURSE, ROOT

PKG = ROOT / "autograder"
# Control-flow signals that stay private to the module that raises and catches them (errors.py says why).
PRIVATE_SIGNALS = {"_Stop": "sandbox/server.py", "_GraderFault": "sandbox/runtime.py", "_TooBig": "batch/inputs.py"}
BUILTIN_EXCEPTIONS = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                      and issubclass(getattr(builtins, n), BaseException)}


def _exception_classes() -> dict[str, list[str]]:
    """{class name: [files defining it]} of every class in autograder/ that derives from an exception."""
    defined: dict[str, list[tuple[str, list[str]]]] = {}
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).split("[")[0].split(".")[-1] for b in node.bases]
                defined.setdefault(node.name, []).append((path.relative_to(PKG).as_posix(), bases))
    exceptions = set(BUILTIN_EXCEPTIONS)
    grew = True
    while grew:  # a class is an exception when one of its bases is (by name, through any module)
        grew = False
        for name, defs in defined.items():
            if name not in exceptions and any(b in exceptions for _, bases in defs for b in bases):
                exceptions.add(name)
                grew = True
    return {name: [p for p, _ in defs] for name, defs in defined.items() if name in exceptions}


def test_every_exception_class_is_defined_in_errors_py_or_is_a_listed_private_signal():
    found = _exception_classes()
    outside = {name: [p for p in paths if p != "errors.py"] for name, paths in found.items()}
    outside = {name: paths for name, paths in outside.items() if paths}
    assert outside == {name: [path] for name, path in PRIVATE_SIGNALS.items()}, (
        "an exception class defined outside autograder/errors.py: move it there (and into errors.TABLE), "
        "or, if it is a private control-flow signal, list it with its reason in errors.py's docstring")


def test_every_class_in_errors_py_is_in_the_table_and_drawn_in_the_tree():
    in_errors = {name for name, paths in _exception_classes().items() if "errors.py" in paths}
    listed = {cls.__name__ for cls in errors.TABLE if cls.__module__ == errors.__name__}
    assert in_errors == listed
    tree = errors.__doc__ or ""
    assert [n for n in sorted(in_errors) if not re.search(rf"\b{n}\b", tree)] == []
    assert [n for n in PRIVATE_SIGNALS if f"._{n[1:]}``" not in tree] == []


def test_builtin_bases_that_matter_are_kept_beside_ours():
    for cls, builtin in [(errors.IsolationError, OSError), (errors.FilterError, OSError),
                         (errors.MissingName, AttributeError), (errors.Failure, AssertionError),
                         (errors.ServerFailed, RuntimeError)]:
        assert issubclass(cls, errors.TorchgraderError) and issubclass(cls, builtin), cls
    e = errors.IsolationError(1, "mount /proc: Operation not permitted")
    assert (e.errno, e.strerror, str(e)) == (1, "mount /proc: Operation not permitted", e.message)
    # a Ctrl-C must stay out of every `except Exception`
    assert not issubclass(errors.BatchInterrupted, Exception) and issubclass(errors.BatchInterrupted, KeyboardInterrupt)


def test_old_import_paths_give_the_one_definition():
    from autograder import judge
    from autograder.assignment import AssignmentError, SuiteProblems
    from autograder.batch.backends import WorkerDied, WorkerFatal
    from autograder.batch.nbgrader_db import NbgraderError
    from autograder.batch.runner import BatchError, BatchInterrupted
    from autograder.judge import feedback, proxy
    from autograder.load import LoadError
    from autograder.sandbox import client, isolation, seccomp, wire

    assert feedback.Failure is judge.Failure is errors.Failure  # staff suites import these
    assert judge.StudentTimeout is proxy.StudentTimeout is errors.StudentOverTime
    assert client.SandboxTimeout is errors.SandboxNoReply and client.ServerFailed is errors.ServerFailed
    assert (wire.WireError, wire.Unencodable) == (errors.WireError, errors.Unencodable)
    assert (isolation.IsolationError, isolation.SetupRefused, seccomp.FilterError) == (
        errors.IsolationError, errors.SetupRefused, errors.FilterError)
    assert (AssignmentError, SuiteProblems, LoadError, BatchError, BatchInterrupted, WorkerDied, WorkerFatal,
            NbgraderError) == (errors.AssignmentError, errors.SuiteProblems, errors.LoadError, errors.BatchError,
                               errors.BatchInterrupted, errors.WorkerDied, errors.WorkerFatal, errors.NbgraderError)
    for name in ("StudentNameMissing", "StudentNotImplemented", "StudentError", "StudentCrash", "StudentProblem"):
        assert getattr(judge, name) is getattr(errors, name)


def _doc_tables() -> tuple[dict[int, str], dict[str, tuple[str, int, str]]]:
    text = (ROOT / "docs" / "errors.md").read_text()
    codes, rows = {}, {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and re.fullmatch(r"\d+", cells[0]):
            codes[int(cells[0])] = cells[1]
        elif line.startswith("| `") and len(cells) == 5:
            rows[cells[0].strip("`")] = (cells[1], int(cells[2]), cells[3])
    return codes, rows


def test_docs_errors_md_is_the_table():
    codes, rows = _doc_tables()
    assert set(codes) == {e.value for e in errors.Exit}
    assert rows == {cls.__name__: (m.status, m.exit.value, m.audience) for cls, m in errors.TABLE.items()}
    assert "errors.md" in (ROOT / "docs" / "architecture.md").read_text()


def test_the_table_reads_through_subclasses_and_covers_every_raised_thing():
    assert errors.meaning(errors.SandboxCannotStart("x")).status == "stop"
    assert errors.meaning(errors.OutputFolderError("x")).exit == errors.Exit.ERROR
    assert errors.meaning(errors.SubmitUnauthorized("x")).exit == 6 == errors.Exit.UNAUTHORIZED
    assert errors.meaning(ZeroDivisionError()) is errors.TABLE[BaseException]
    assert errors.SuiteError("x").audience == "staff" and errors.LoadError("x").audience == "student"


def test_the_judge_reports_each_error_with_the_tables_status():
    from autograder.judge.plugin import GRADER_FAILED, outcome

    cases = [errors.Failure("expected 3, got 4", "off_by_one"), errors.StudentOverTime("too slow"),
             errors.JudgeOvertime("over"), errors.StudentCrash("died"), errors.GraderError("probe broke"),
             errors.SuiteError("bad arg"), errors.WorkerFatal("x"), AssertionError("plain"), MemoryError(),
             ValueError("odd")]
    for exc in cases:
        status, message, key = outcome(exc, "t", "ex")
        assert status == errors.meaning(exc).status, exc
        if status == "grader_error":
            assert message == GRADER_FAILED
    assert outcome(cases[0], "t", "ex") == ("failed", "expected 3, got 4", "off_by_one")
    # under plain pytest a server that failed is never the student's
    assert outcome(errors.ServerFailed("gone"), "t", "ex")[0] == "grader_error"


@pytest.fixture
def dead_server(monkeypatch):
    """Every grading in this process gets a sandbox server that has already died: ServerFailed, for real."""
    import autograder.grade
    from autograder.sandbox.client import SandboxServer

    started = []

    def start(assignment, options):
        server = SandboxServer(warm_compiler=False)
        server.proc.kill()
        server.proc.wait()
        started.append(server)
        return server

    monkeypatch.setattr(autograder.grade, "start_server", start)
    yield started
    for s in started:
        s.close()


def test_a_server_that_fails_gives_a_sentence_and_the_documented_exit_code(dead_server, tmp_path, capsys):
    """`check` and `try` in this process (validate's workers: tests/sandbox/test_cannot_start.py)."""
    from autograder.cli import main

    sub = tmp_path / "alice.py"
    sub.write_text((DEMO_COURSE / "solutions/demo/basics/reference.py").read_text())
    code = errors.meaning(errors.ServerFailed).exit
    codes, _ = _doc_tables()
    assert code != 0 and code in codes
    for argv in (["check", str(sub), "--assignment", "demo", "--course", str(DEMO_COURSE), "--exercise", "basics"],
                 ["try", "demo", "basics", "--course", str(DEMO_COURSE)]):
        assert main(argv) == code, argv
        captured = capsys.readouterr()
        assert "torchgrader: the sandbox server failed to start" in captured.err, argv
        assert "Traceback" not in captured.err + captured.out and "points" not in captured.out, argv
    assert len(dead_server) == 2


def test_cli_main_takes_its_exit_codes_from_the_table():
    """No parallel chain of codes: main's handlers return what the table says."""
    from autograder import cli

    source = ast.get_source_segment((PKG / "cli.py").read_text(), next(
        n for n in ast.parse((PKG / "cli.py").read_text()).body if isinstance(n, ast.FunctionDef) and n.name == "main"))
    handlers = [h for n in ast.walk(ast.parse(source or "")) if isinstance(n, ast.Try) for h in n.handlers]
    assert handlers, "cli.main catches errors"
    for h in handlers:
        returns = [r for r in ast.walk(h) if isinstance(r, ast.Return)]
        assert returns and all("meaning(" in ast.unparse(r) for r in returns), ast.unparse(h)
    assert cli.main is not None


def test_the_exit_codes_are_stable():
    """Scripts rely on these numbers: changing one is a breaking change (docs/errors.md, CHANGELOG)."""
    assert {e.name: e.value for e in errors.Exit} == {
        "OK": 0, "NO": 1, "ERROR": 2, "REFUSED": 3, "UNREACHABLE": 4, "GRADER_FAILED": 5, "UNAUTHORIZED": 6,
        "INTERRUPTED": 130}
    from autograder.service.client import EXIT

    assert set(EXIT.values()) <= set(errors.Exit)



def test_a_server_that_dies_during_grading_yields_no_result(tmp_path):
    """No test of it is the student's `error` (zeros nobody earned, stored): the run stops, nothing is stored."""
    from autograder.assignment import load_assignment
    from autograder.grade import grade
    from autograder.sandbox.client import SandboxServer

    sub = tmp_path / "alice.py"
    sub.write_text((DEMO_COURSE / "solutions/demo/basics/reference.py").read_text())
    server = SandboxServer(warm_compiler=False)
    try:
        server.proc.kill()  # as if it had said ready and then died: the first test's sandbox cannot be spawned
        server.proc.wait()
        server._ready = True  # (without waiting for its torch import first, which costs seconds)
        got: list = []
        with pytest.raises(errors.ServerFailed, match="has exited"):
            grade(load_assignment("demo", DEMO_COURSE, only=["basics"]), [sub], server=server, on_result=got.append)
        assert got == []
    finally:
        server.close()
