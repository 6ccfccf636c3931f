"""The staff's inner loop: try one case in seconds, suites under plain pytest, validate that stops and names causes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.authoring.scaffold import scaffold
from autograder.authoring.validate import validate
from autograder.grade import grade
from tests.helpers import DEMO_COURSE, ROOT


@pytest.fixture
def course(tmp_path: Path) -> Path:
    dest = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, dest, ignore=shutil.ignore_patterns("__pycache__", ".torchgrader-*"))
    return dest


def run_validate(course: Path, server, **kw) -> tuple[int, str]:
    lines: list[str] = []
    code = validate("demo", course, out=lines.append, server=server, jobs=1, repeats=1, **kw)
    return code, "\n".join(lines)


def test_try_runs_one_case_and_shows_what_a_student_reads(capsys):
    from autograder.cli import main

    base = ["--course", str(DEMO_COURSE)]
    assert main(["try", "demo", "basics", *base, "--against", "mutants/column_means.py", "--show-feedback"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"PASS +1/1 +double\(x\) doubles every entry", out), out
    assert re.search(r"FAIL +0/2 +row_means\(x\) averages each row +\[averages_columns\]", out), out
    assert "| Expected row_means(x) to have shape (3,), but it has shape (7,). You averaged columns" in out
    assert "2/4 points on basics" in out
    # the reference, one test picked with -k; the stub of another exercise
    assert main(["try", "demo", "basics", *base, "-k", "row_means"]) == 0
    out = capsys.readouterr().out
    assert "row_means(x) averages each row" in out and "double(x)" not in out and "2/2 points" in out
    assert main(["try", "demo", "counter", *base, "--against", "stub", "--show-feedback"]) == 1
    out = capsys.readouterr().out
    assert "is not implemented yet: it still raises NotImplementedError" in out and "0/2 points on counter" in out
    assert main(["try", "demo", "counter", *base, "--against", "mutants/nope.py"]) == 2
    assert (
        "'mutants/nope.py' is not a case of counter: give reference, stub, or one of alternatives/history.py, "
        "mutants/ignores_start.py" in capsys.readouterr().err
    )


def test_hidden_suites_run_under_plain_pytest_against_a_case(tmp_path: Path):
    suite = DEMO_COURSE / "solutions/demo/basics/test_hidden.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "-x"]
    r = subprocess.run(
        [*cmd, "--against", "mutants/column_means.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 2 passed" in r.stdout, r.stdout
    assert "what a student reads" in r.stdout and "You averaged columns (dim=0) instead of rows." in r.stdout
    assert "[misconception: averages_columns]" in r.stdout
    # no --against: a course suite runs against the reference; -k works
    r = subprocess.run([*cmd, "-k", "row_means"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0 and "1 passed, 2 deselected" in r.stdout, r.stdout + r.stderr
    # probes run as in grading (the exercise's probes.py is loaded into the sandbox)
    counter = DEMO_COURSE / "solutions/demo/counter/test_hidden.py"
    r = subprocess.run([*cmd[:3], str(counter), *cmd[4:], "--against", "reference"], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout + r.stderr


def test_suite_mistakes_are_grader_errors_that_validate_names(course: Path, server):
    counter = course / "solutions/demo/counter"
    (counter / "test_hidden.py").write_text(
        (counter / "test_hidden.py").read_text()
        + '''

@pytest.mark.points(1)
def test_adds_a_callable(student):
    """Counter.add with a judge-side function"""
    c = student.Counter(0)
    check(c.add(lambda n: n) == 0, "add should accept it.")


@pytest.mark.points(1)
def test_probe_by_computed_name(sandbox):
    """A probe whose name is computed"""
    check(sandbox.probe("count_" + "too", 4) == 7, "7 expected.")
'''
    )
    toml = course / "assignments/demo/counter/exercise.toml"
    toml.write_text(toml.read_text().replace("points = 2", "points = 4"))
    a = load_assignment("demo", course)
    (sub := course / "ref.py").write_text(
        (counter / "reference.py").read_text() + (course / "solutions/demo/basics/reference.py").read_text()
    )
    r = grade(a, [sub], server=server)[0]
    tests = {t.nodeid.split("::")[-1]: t for e in r.exercises for t in e.tests}
    for name in ("test_adds_a_callable", "test_probe_by_computed_name"):
        t = tests[name]
        # never blamed on the student: the points are withheld, the message says it is not their mistake
        assert t.status == "grader_error" and t.max_points == 0 and "not a mistake in your code" in t.message
        assert "could not use what your code returned" not in t.message
    assert "the test passes argument 1 (function) of `Counter" in tests["test_adds_a_callable"].detail
    assert "sandbox.ref(" in tests["test_adds_a_callable"].detail and "probe" in tests["test_adds_a_callable"].detail
    assert "the probe 'count_too', which" in tests["test_probe_by_computed_name"].detail
    assert "the probes that exist: count_to" in tests["test_probe_by_computed_name"].detail

    code, out = run_validate(course, server, exercises=["counter"])
    assert code == 1, out
    assert re.search(
        r"FAIL counter: reference: the grader itself failed in 2 test\(s\), first: Counter.add with a "
        r"judge-side function \(test_adds_a_callable\): the test passes argument 1 \(function\)",
        out,
    ), out
    assert (
        "A probe whose name is computed (test_probe_by_computed_name): the test asks for the probe 'count_too'" in out
    )
    assert "FAIL counter: stopped: nothing else was graded" in out and "mutant ignores_start" not in out
    assert "FAIL basics" not in out  # the mistake is in counter's suite, and reported there only


def test_validate_one_exercise_grades_every_suite_on_the_references_and_stops(course: Path, server):
    # counter's reference rebinds a name basics defines (an assignment, which no def-based check sees)
    ref = course / "solutions/demo/counter/reference.py"
    ref.write_text(ref.read_text() + "\n\ndouble = lambda x: x * 3\n")
    code, out = run_validate(course, server, exercises=["counter"])
    assert code == 1, out
    assert "FAIL basics: reference: should earn full marks but earned 3/4: double(x) doubles every entry" in out
    # what a student with that code would read is printed under the failing row, and nothing else is graded
    assert re.search(r"\| double\(x\) doubles every entry \[failed, 0/1\]: double\(x\) has the right shape", out), out
    assert (
        "FAIL basics: stopped: counter's reference defines `double` (reference.py:10), which the suite of "
        "basics uses; nothing else was graded" in out
    )
    assert "The reference does not earn full marks" in out
    assert "mutant ignores_start" not in out and "alternative history" not in out


def test_the_scaffold_passes_validate_as_generated(course: Path, server):
    scaffold(course, "demo", "scaled")
    code, out = run_validate(course, server, exercises=["scaled"], show_feedback=True)
    assert code == 0, out
    assert re.search(
        r"ok +mutant unbiased_variance +exact +caught \(0/10\) by 2 test\(s\).*diagnosed as "
        r"`unbiased_variance`",
        out,
    ), out
    assert re.search(r"ok +alternative explicit_sums +10/10", out), out
    # --show-feedback: what a student with the mutant's mistake reads
    assert "| standardize(x) on a random float64 batch [failed, 0/6]: " in out
    assert "The variance was divided by n - 1 (torch.var's default" in out


def test_the_plugin_stays_inert_in_the_projects_own_test_run(request: pytest.FixtureRequest):
    """`pytest` with testpaths = tests/ (which holds a test course's suites beside the project's own tests)
    is not an inner-loop run: the judge's fixtures must not wrap the project's tests (they once armed the
    judge's watchdog around every test of the suite). A folder of course suites alone still is one."""
    from types import SimpleNamespace

    from autograder.authoring.pytest_plugin import _suites

    assert not request.config.pluginmanager.has_plugin("torchgrader-local")
    assert _suites(SimpleNamespace(args=[str(ROOT / "tests")])) == []  # type: ignore[arg-type]
    assert _suites(SimpleNamespace(args=[str(ROOT)])) == []  # type: ignore[arg-type]
    folder = DEMO_COURSE / "solutions/demo/basics"
    assert [e for _, _, e in _suites(SimpleNamespace(args=[str(folder)]))] == ["basics"]  # type: ignore[arg-type]
