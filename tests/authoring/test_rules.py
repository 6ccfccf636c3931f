"""Every rule of the contract has an id in the course's material and a hidden test that declares it checks it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from autograder.assignment import exercise_toml_problems, load_assignment
from autograder.authoring.validate import validate
from tests.helpers import DEMO_COURSE, ROOT

CONVENTIONS = ("inputs_unmodified", "global_settings")


@pytest.mark.parametrize("assignment", ["pytorch-fundamentals", "distributed-training"])
def test_the_course_names_every_rule_and_both_conventions(assignment: str) -> None:
    a = load_assignment(assignment, ROOT)
    assert set(CONVENTIONS) <= set(a.conventions), a.conventions
    for ex in a.exercises:
        rules = a.rules_of(ex)
        assert ex.rules, f"{ex.id} has no [rules]"
        # every function takes a tensor, a module or an optimizer somewhere, except where only numbers go in
        exempt = set(ex.conventions_exempt)
        assert exempt <= {"inputs_unmodified"} and ("global_settings" in rules), (ex.id, rules)
        assert set(CONVENTIONS) - exempt <= set(rules), (ex.id, rules)


def test_validate_prints_the_coverage_of_every_exercise_and_passes() -> None:
    lines: list[str] = []
    code = validate("pytorch-fundamentals", ROOT, static_only=True, out=lines.append)
    out = "\n".join(lines)
    assert code == 0, out
    rows = re.findall(r"^  ok +rules covered +(\d+)/(\d+) rules of the contract checked .*$", out, re.M)
    assert len(rows) == len(load_assignment("pytorch-fundamentals", ROOT).exercises), out
    assert all(a == b for a, b in rows), out
    # the conventions are counted on every exercise
    for line in out.splitlines():
        if "rules covered" in line:
            assert "inputs_unmodified (" in line and "global_settings (" in line, line


def _demo_with_rules(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns(".torchgrader*", "__pycache__"))
    toml = course / "assignments" / "demo" / "assignment.toml"
    toml.write_text(toml.read_text() + '\n[conventions]\ninputs_unmodified = "Inputs are never modified."\n')
    for ex, rules in (("basics", {"double": "double(x) doubles.", "row_means": "row_means(x) averages rows."}),
                      ("counter", {"counter": "Counter counts."})):
        t = course / "assignments" / "demo" / ex / "exercise.toml"
        t.write_text(t.read_text() + "\n[rules]\n" + "".join(f'{k} = "{v}"\n' for k, v in rules.items()))
    marks = {"test_double_values": '"double"', "test_double_keeps_input": '"double", "inputs_unmodified"',
             "test_row_means": '"row_means"', "test_counter_handle": '"counter", "inputs_unmodified"',
             "test_counter_probe": '"counter"'}
    for ex in ("basics", "counter"):
        hidden = course / "solutions" / "demo" / ex / "test_hidden.py"
        text = hidden.read_text()
        for name, ids in marks.items():
            text = re.sub(rf"^(@pytest\.mark\.points\([^)]*\)\n)(def {name}\()", rf"@pytest.mark.rules({ids})\n\1\2",
                          text, flags=re.M)
        hidden.write_text(text)
    return course


def _static(course: Path) -> tuple[int, str]:
    lines: list[str] = []
    code = validate("demo", course, static_only=True, out=lines.append)
    return code, "\n".join(lines)


def test_a_rule_no_test_declares_fails_validate_and_the_row_names_it(tmp_path: Path) -> None:
    course = _demo_with_rules(tmp_path)
    code, out = _static(course)
    assert code == 0, out
    assert re.search(r"ok +rules covered +3/3 rules of the contract checked .*double \(2\)", out), out
    # the row-means test stops declaring its rule: nothing checks it any more
    hidden = course / "solutions" / "demo" / "basics" / "test_hidden.py"
    hidden.write_text(hidden.read_text().replace('@pytest.mark.rules("row_means")', '@pytest.mark.rules("double")'))
    code, out = _static(course)
    assert code != 0, out
    assert re.search(r"FAIL +rules covered +2/3 rules of the contract checked; no hidden test checks `row_means`", out)


def test_an_undeclared_test_and_an_unknown_rule_are_authoring_problems(tmp_path: Path) -> None:
    course = _demo_with_rules(tmp_path)
    hidden = course / "solutions" / "demo" / "basics" / "test_hidden.py"
    text = hidden.read_text().replace('@pytest.mark.rules("row_means")\n', "")
    hidden.write_text(text.replace('"double", "inputs_unmodified"', '"double", "inputs_unmodifed"'))
    code, out = _static(course)
    assert code != 0 and "nothing was graded" in out, out
    assert "test_row_means has no @pytest.mark.rules(...)" in out, out
    assert "declares the rule 'inputs_unmodifed'" in out and "Did you mean 'inputs_unmodified'?" in out, out


def test_an_exempt_convention_is_said_with_its_reason(tmp_path: Path) -> None:
    course = _demo_with_rules(tmp_path)
    t = course / "assignments" / "demo" / "counter" / "exercise.toml"
    t.write_text(t.read_text() + '\n[conventions_exempt]\ninputs_unmodified = "Counter takes no input"\n')
    hidden = course / "solutions" / "demo" / "counter" / "test_hidden.py"
    hidden.write_text(hidden.read_text().replace('"counter", "inputs_unmodified"', '"counter"'))
    code, out = _static(course)
    assert code == 0, out
    assert "exempt: inputs_unmodified (Counter takes no input)" in out, out


def test_the_schema_refuses_a_rule_id_that_is_not_snake_case() -> None:
    problems = exercise_toml_problems({"title": "t", "points": 1, "timeout": 1,
                                       "rules": {"Bad-Id": "x", "ok": ""}}, "ex")
    said = " ".join(m for _, m in problems)
    assert "'Bad-Id' is not lower_snake_case" in said and "`rules.ok` must be a non-empty string" in said
