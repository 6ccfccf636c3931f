"""Probes: loaded before student code, stripped of staff notes, and a failure of the
grader's own code is a grader error (points withheld, staff told), never the student's."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.grade import GradeOptions, grade
from autograder.judge.proxy import strip_source
from autograder.report.classreport import class_report_html
from autograder.report.gradebook import write_gradebook
from autograder.report.submission import feedback_markdown
from tests.helpers import DEMO_COURSE

PROBES = '''"""Staff notes: the expected answer is 42 (must never reach the sandbox)."""
import torch


def seen_by_student(mod):
    """Docstring with staff notes."""
    # a comment with staff notes
    return sorted(k for k in __import__("sys").modules if k.startswith(("autograder", "probes_")))


def broken(mod):
    import a_module_the_grader_forgot  # noqa: F401
    return 1


def calls_student(mod, x):
    return mod.double(x)


class Thing:
    pass


def pickles(mod):
    import pickle

    return type(pickle.loads(pickle.dumps(Thing()))).__module__
'''

TESTS = '''

@pytest.mark.points(1)
def test_probe_module_is_loaded_first(sandbox):
    """the probes are a real module, loaded before the student's code"""
    names = sandbox.probe("seen_by_student")
    check(names == ["autograder", "probes_basics"], f"modules: {names}")


@pytest.mark.points(1)
def test_probe_objects_pickle(sandbox):
    """objects of a probe's classes pickle by reference, as in a real module"""
    check(sandbox.probe("pickles") == "probes_basics", "did not pickle")


@pytest.mark.points(3)
def test_uses_a_broken_probe(sandbox):
    """a test whose probe fails inside the grader"""
    check(sandbox.probe("broken") == 1, "unreachable")


@pytest.mark.points(2)
def test_with_a_bug_in_the_judge(student):
    """a hidden test whose own code is broken"""
    check(student.row_means(torch.ones(2, 2)) is not None and undefined_helper(), "unreachable")


@pytest.mark.points(1)
def test_student_error_through_a_probe(sandbox):
    """an exception of the student's code, raised through a probe, stays the student's"""
    check(sandbox.probe("calls_student", torch.ones(2)) is not None, "double returned None")
'''

STUDENT = """import torch


def double(x):
    raise ValueError("my own bug")


def row_means(x):
    return x.mean(dim=1)


class Counter:
    def __init__(self, start=0):
        self.total = start

    def add(self, n):
        self.total += n
        return self.total
"""


@pytest.fixture(scope="module")
def graded(server, tmp_path_factory):
    course = tmp_path_factory.mktemp("course") / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    basics = course / "solutions" / "demo" / "basics"
    (basics / "probes.py").write_text(PROBES)
    with open(basics / "test_hidden.py", "a") as f:
        f.write(TESTS)
    sub = tmp_path_factory.mktemp("subs") / "student.py"
    sub.write_text(STUDENT)
    assignment = load_assignment("demo", course)
    (result,) = grade(assignment, [sub], options=GradeOptions(exercises=["basics"]), server=server)
    return result


def _test(result, function):
    return next(t for e in result.exercises for t in e.tests if t.nodeid.endswith(f"::{function}"))


def test_probes_ship_without_docstrings_or_comments():
    stripped = strip_source(PROBES)
    assert "staff notes" not in stripped and "42" not in stripped
    assert "def seen_by_student(mod):" in stripped and "def broken(mod):" in stripped


def test_probes_are_registered_and_the_grader_is_not(graded):
    t = _test(graded, "test_probe_module_is_loaded_first")
    assert t.status == "passed", t.message
    t = _test(graded, "test_probe_objects_pickle")
    assert t.status == "passed", t.message


def test_a_grader_internal_error_costs_the_student_nothing(graded):
    t = _test(graded, "test_uses_a_broken_probe")
    assert t.status == "grader_error"
    assert t.points == 0 and t.max_points == 0 and t.withheld == 3
    assert "not a mistake in your code" in t.message
    assert "a_module_the_grader_forgot" not in t.message  # staff detail stays staff-only
    assert "a_module_the_grader_forgot" in t.detail
    assert t in graded.grader_errors and len(graded.grader_errors) == 2
    ex = graded.exercise("basics")
    assert ex.max_points == sum(x.max_points for x in ex.tests)  # the withheld points are out of the max


def test_a_bug_in_the_hidden_test_itself_is_a_grader_error(graded):
    t = _test(graded, "test_with_a_bug_in_the_judge")
    assert t.status == "grader_error" and t.withheld == 2 and "undefined_helper" in t.detail


def test_a_student_exception_through_a_probe_stays_the_students(graded):
    t = _test(graded, "test_student_error_through_a_probe")
    assert t.status == "error" and "my own bug" in t.message


def test_the_gradebook_feedback_and_class_report_show_it(graded, tmp_path: Path):
    write_gradebook([graded], tmp_path / "gradebook.csv", ["basics"])
    (row,) = list(csv.DictReader((tmp_path / "gradebook.csv").open()))
    assert row["flagged"] == "yes" and "grader error in 2 test" in row["review"]
    assert "The grader itself failed on this test" in feedback_markdown(graded)
    page = class_report_html([graded], title="demo")
    assert "grader error" in page and "a_module_the_grader_forgot" in page
