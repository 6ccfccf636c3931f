"""Static authoring checks and `torchgrader new`: mistakes named by file and line, before anything runs."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from autograder.assignment import AssignmentError, load_assignment
from autograder.authoring.lint import changed_names, hidden_tests_calling, lint_assignment, lint_points
from autograder.authoring.scaffold import scaffold
from autograder.authoring.validate import validate
from tests.helpers import DEMO_COURSE, ROOT


@pytest.fixture
def course(tmp_path: Path) -> Path:
    dest = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def problems(course: Path, assignment: str = "demo") -> list[str]:
    facts = lint_assignment(course, assignment)
    return [p.format(course) for f in facts.values() for p in f.problems]


def run_validate(course: Path, assignment: str = "demo", **kw) -> tuple[int, str]:
    lines: list[str] = []
    code = validate(assignment, course, out=lines.append, jobs=1, **kw)  # in this process
    return code, "\n".join(lines)


def test_the_demo_course_and_the_real_assignment_pass_the_static_checks():
    assert problems(DEMO_COURSE) == []
    assert problems(ROOT, "pytorch-fundamentals") == []
    for course, a in ((DEMO_COURSE, "demo"), (ROOT, "pytorch-fundamentals")):
        assignment = load_assignment(a, course)
        by_ex, probs = lint_points(assignment)
        assert probs == []
        for ex in assignment.exercises:
            assert sum(t.points for t in by_ex[ex.id]) == ex.points


def test_authoring_mistakes_are_reported_with_file_and_line_before_anything_runs(course: Path):
    hidden = course / "solutions/demo/basics/test_hidden.py"
    src = hidden.read_text()
    src = src.replace("@pytest.mark.points(1)\ndef test_double_keeps_input", "def test_double_keeps_input", 1)
    src += ('\n\n@pytest.mark.points(0.5)\ndef test_plain_assert(student):\n    """plain"""\n'
            "    assert student.double(1) == 2\n")
    src += '\n\n@pytest.mark.points(0.5)\ndef test_no_doc(student):\n    check(True, "fine")\n'
    hidden.write_text(src)
    (course / "assignments/demo/counter/stub.py").write_text("class Counter:\n    def __init__(self, start=0)\n")
    (course / "solutions/demo/counter/mutants/no_doc.py").write_text("class Counter:\n    pass\n")
    (course / "solutions/demo/basics/mutants/bad_key.py").write_text(
        '"""Bad key."""\n# misconception: squares, two words\ndef double(x):\n    return x\n')
    (course / "solutions/demo/basics/mutants/empty_key.py").write_text(
        '"""No key."""\n# misconception:\ndef double(x):\n    return x\n')
    (course / "assignments/demo/basics/exercise.toml").write_text(
        'id = "basics"\ntitle = "T"\npoints = 4\ntimeout = = 3\n')
    (course / "assignments/demo/counter/public_test.py").unlink()
    (course / "assignments/demo/stray").mkdir()
    (course / "assignments/demo/stray/exercise.toml").write_text('id = "stray"\n')

    found = problems(course)
    text = "\n".join(found)
    lines = {ln: i for i, ln in enumerate(hidden.read_text().splitlines(), start=1)}
    keeps = next(i for ln, i in lines.items() if ln.startswith("def test_double_keeps_input"))
    plain = next(i for ln, i in lines.items() if ln.strip() == "assert student.double(1) == 2")
    no_doc = next(i for ln, i in lines.items() if ln.startswith("def test_no_doc"))
    assert f"solutions/demo/basics/test_hidden.py:{keeps}: test_double_keeps_input has no @pytest.mark.points" in text
    assert f"solutions/demo/basics/test_hidden.py:{plain}: `assert` without a message" in text
    assert f"solutions/demo/basics/test_hidden.py:{no_doc}: test_no_doc has no docstring" in text
    assert "assignments/demo/counter/stub.py:2: does not parse" in text
    assert "solutions/demo/counter/mutants/no_doc.py:1: a mutant needs a module docstring" in text
    assert "solutions/demo/counter/mutants/no_doc.py:1: a mutant needs a header line `# misconception: key`" in text
    assert "solutions/demo/basics/mutants/bad_key.py:2: misconception key(s) 'two words' are not keys" in text
    assert "solutions/demo/basics/mutants/empty_key.py:2: the misconception header names no key" in text
    assert "assignments/demo/basics/exercise.toml:4: not valid TOML" in text
    assert "assignments/demo/counter/public_test.py: missing" in text
    assert "assignments/demo/stray/exercise.toml: exercise 'stray' is not listed in assignment.toml" in text

    code, out = run_validate(course)
    assert code == 2
    assert "nothing was graded" in out and f"test_hidden.py:{plain}" in out


def test_points_must_add_up_and_hidden_tests_must_differ_from_public_ones(course: Path):
    toml = course / "assignments/demo/basics/exercise.toml"
    toml.write_text(toml.read_text().replace("points = 4", "points = 5"))
    public = (course / "assignments/demo/basics/public_test.py").read_text()
    hidden = course / "solutions/demo/basics/test_hidden.py"
    copied = public[public.index("def test_double_small"):].replace("def test_double_small", "def test_copied")
    hidden.write_text(hidden.read_text() + "\n\n@pytest.mark.points(1)\n" + copied)
    text = "\n".join(problems(course))
    assert re.search(r"solutions/demo/basics/test_hidden.py:\d+: test_copied is identical to the public test "
                     r"test_double_small \(public_test.py:\d+\)", text)
    _, probs = lint_points(load_assignment("demo", course))
    assert probs == []  # 4 + 1 points, as declared
    toml.write_text(toml.read_text().replace("points = 5", "points = 7"))
    _, probs = lint_points(load_assignment("demo", course))
    assert [p.format(course) for p in probs] == [
        "assignments/demo/basics/exercise.toml:2: declares 7 points but the hidden tests add up to 5 (4 tests)"
    ]


def test_a_surviving_mutant_is_traced_to_the_functions_it_changes_and_the_tests_that_call_them():
    basics = DEMO_COURSE / "solutions/demo/basics"
    names = changed_names(basics / "reference.py", basics / "mutants/column_means.py")
    assert names == ["row_means"]
    assert hidden_tests_calling(basics / "test_hidden.py", basics / "probes.py", names) == [("test_row_means", 25)]
    counter = DEMO_COURSE / "solutions/demo/counter"
    names = changed_names(counter / "reference.py", counter / "mutants/ignores_start.py")
    # the probe `count_to` builds a Counter, so the probe-driven test counts too
    assert [n for n, _ in hidden_tests_calling(counter / "test_hidden.py", counter / "probes.py", names)] == [
        "test_counter_handle", "test_counter_probe"]


def test_new_scaffolds_every_file_and_lists_the_exercise(tmp_path: Path, course: Path):
    pf = tmp_path / "pf"
    shutil.copytree(ROOT / "assignments/pytorch-fundamentals", pf / "assignments/pytorch-fundamentals",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = tomllib.loads((pf / "assignments/pytorch-fundamentals/assignment.toml").read_text())["exercises"]
    created = scaffold(pf, "pytorch-fundamentals", "einsum_drills")
    meta_text = (pf / "assignments/pytorch-fundamentals/assignment.toml").read_text()
    assert "# Order of the exercises" in meta_text  # comments kept
    assert tomllib.loads(meta_text)["exercises"] == [*before, "einsum_drills"]
    rel = sorted(str(p.relative_to(pf)) for p in created)
    for f in ("assignments/pytorch-fundamentals/einsum_drills/exercise.toml", "statement.md", "stub.py",
              "public_test.py", "solutions/pytorch-fundamentals/einsum_drills/reference.py", "test_hidden.py",
              "probes.py", "alternatives/explicit_sums.py", "mutants/unbiased_variance.py"):
        assert any(r.endswith(f) for r in rel), f
    with pytest.raises(AssignmentError, match="already exists"):
        scaffold(pf, "pytorch-fundamentals", "einsum_drills")
    with pytest.raises(AssignmentError, match="lowercase"):
        scaffold(pf, "pytorch-fundamentals", "Bad-Name")

    # a single-line list, and a brand-new assignment
    scaffold(course, "demo", "extra")
    assert tomllib.loads((course / "assignments/demo/assignment.toml").read_text())["exercises"] == [
        "basics", "counter", "extra"]
    scaffold(course, "fresh", "first")
    scaffold(course, "fresh", "second")
    assert tomllib.loads((course / "assignments/fresh/assignment.toml").read_text())["exercises"] == [
        "first", "second"]
    # the second exercise's example function does not collide with the first's (one namespace)
    assert "def standardize(" in (course / "assignments/fresh/first/stub.py").read_text()
    assert "def standardize_second(" in (course / "assignments/fresh/second/stub.py").read_text()
    assert problems(course, "fresh") == [
        "assignments/fresh/assignment.toml:2: the title is still the scaffold's TODO (it is the notebook's heading)"]
    # a realistic example, not placeholders: no id line (the folder is the id), no TODO, no points(0)
    toml = (course / "assignments/demo/extra/exercise.toml").read_text()
    assert "TODO" not in toml and not re.search(r"^id\s*=", toml, re.M)
    assert "points(" not in (course / "assignments/demo/extra/public_test.py").read_text()
    assert "# misconception: unbiased_variance" in (course / "solutions/demo/extra/mutants/unbiased_variance.py"
                                                    ).read_text()
    assert [p for p in problems(course) if "/extra/" in p] == []
    by_ex, probs = lint_points(load_assignment("demo", course))
    assert probs == [] and [t.points for t in by_ex["extra"]] == [6.0, 4.0]


def test_new_from_the_command_line(course: Path, capsys):
    from autograder.cli import main

    assert main(["new", "demo", "third", "--course", str(course), "--points", "6"]) == 0
    out = capsys.readouterr().out
    assert "solutions/demo/third/test_hidden.py" in out and "torchgrader validate demo" in out
    assert "points = 6" in (course / "assignments/demo/third/exercise.toml").read_text()
    hidden = (course / "solutions/demo/third/test_hidden.py").read_text()
    assert "@pytest.mark.points(3.6)" in hidden and "@pytest.mark.points(2.4)" in hidden


def _rename_example(course: Path, exercise: str, old: str, new: str) -> None:
    for path in [*(course / "assignments/demo" / exercise).rglob("*.py"), *(course / "solutions/demo" / exercise)
                 .rglob("*.py")]:
        path.write_text(path.read_text().replace(old, new))


def test_a_name_two_exercises_define_is_reported_with_both_stub_files_and_lines(course: Path):
    # a new exercise whose function is called like basics' (one namespace: the later one wins)
    scaffold(course, "demo", "twice")
    _rename_example(course, "twice", "standardize", "double")
    text = "\n".join(problems(course))
    assert re.search(r"assignments/demo/twice/stub.py:4: `double` is defined by 2 exercises \(basics/stub.py:4; "
                     r"basics/reference.py:4; twice/stub.py:4; twice/reference.py:4\): a submission is every "
                     r"exercise's code in one namespace, so twice's definition replaces basics's and breaks basics",
                     text), text
    # validate --exercise twice reports it too (statically: before grading anything), as does release
    code, out = run_validate(course, exercises=["twice"])
    assert code == 2 and "`double` is defined by 2 exercises" in out and "nothing was graded" in out
    from autograder.authoring.release import ready

    assert any("`double` is defined by 2 exercises" in p for p in ready(course, "demo", unvalidated=True))


def test_every_static_problem_is_reported_in_one_pass(course: Path):
    meta = course / "assignments/demo/assignment.toml"
    meta.write_text(meta.read_text().replace('title = "Engine demo"', 'title = "TODO: the assignment\'s title"')
                    + 'deadline = "friday"\n')
    toml = course / "assignments/demo/basics/exercise.toml"
    toml.write_text(toml.read_text().replace("points = 4", "points = 5") + "difficulty = 3\n")
    hidden = course / "solutions/demo/counter/test_hidden.py"
    hidden.write_text(hidden.read_text().replace('sandbox.probe("count_to", 4)', 'sandbox.probe("count_too", 4)'))
    code, out = run_validate(course, static_only=True)
    assert code == 2, out
    for expected in (
        "assignments/demo/assignment.toml:2: the title is still the scaffold's TODO",
        "assignments/demo/assignment.toml:4: unknown key 'deadline' (known: id, title, exercises, conventions)",
        "assignments/demo/basics/exercise.toml:4: unknown key 'difficulty'",
        "assignments/demo/basics/exercise.toml:2: declares 5 points but the hidden tests add up to 4 (3 tests)",
        "solutions/demo/counter/test_hidden.py:18: probe 'count_too' does not exist in probes.py (did you mean "
        "'count_to'?); the probes are: count_to",
    ):
        assert expected in out, (expected, out)


def test_new_mutant_writes_the_function_as_a_change_to_edit_under_its_header(course: Path, capsys):
    from autograder.authoring.scaffold import new_mutant
    from autograder.cli import main

    with pytest.raises(AssignmentError, match=r"--function NAME \(one of double, row_means\)"):
        new_mutant(course, "demo", "basics", "halves")
    assert main(["new-mutant", "demo", "basics", "halves", "--function", "double", "--course", str(course)]) == 0
    path = course / "solutions/demo/basics/mutants/halves.py"
    out = capsys.readouterr().out
    assert "torchgrader try demo basics --against mutants/halves.py" in out
    assert "torchgrader tidy-mutants demo --exercise basics" in out
    text = path.read_text()
    assert "# misconception: halves\n" in text and "\n def double(x):\n     return x * 2\n" in text
    assert "row_means" not in text and "CHANGE = r" in text
    found = [p for p in problems(course) if "halves.py" in p]
    assert any("docstring is still the scaffold's TODO" in p for p in found), found
    assert any("changes nothing the code does" in p for p in found), found
    path.write_text(text.replace("TODO: the misconception, in one sentence", "Halves instead of doubling")
                    .replace("     return x * 2\n", "-    return x * 2\n+    return x / 2\n"))
    assert [p for p in problems(course) if "halves.py" in p] == []
    # tidy-mutants keeps only what the change needs: the unchanged `def` line goes
    assert main(["tidy-mutants", "demo", "--exercise", "basics", "--course", str(course)]) == 0
    assert path.read_text().endswith("CHANGE = r\'\'\'\n@@ -5,1 +5,1 @@ def double(x):\n-    return x * 2\n"
                                     "+    return x / 2\n\'\'\'\n")
    assert [p for p in problems(course) if "halves.py" in p] == []


def test_a_name_the_suite_asks_for_that_no_reference_defines_is_a_staff_error_with_its_line(course: Path):
    """issue 26, item 11: `student.row_mean` (the contract says `row_means`) is found before anything is graded."""
    hidden = course / "solutions/demo/basics/test_hidden.py"
    text = hidden.read_text()
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "student.row_means(" in ln)
    hidden.write_text(text.replace("student.row_means(", "student.row_mean(", 1))
    call = next(i for i, ln in enumerate(text.splitlines(), 1) if 'call_detailed("double"' in ln)
    hidden.write_text(hidden.read_text().replace('call_detailed("double"', 'call_detailed("doubel"', 1))
    probes = course / "solutions/demo/counter/probes.py"
    probes.write_text(probes.read_text().replace("student.Counter(1)", "student.Countr(1)"))
    found = problems(course)
    assert any("counter/probes.py:2: the suite asks the student for `Countr`" in p and "`Counter`?" in p
               for p in found), found
    assert (f"solutions/demo/basics/test_hidden.py:{line}: the suite asks the student for `row_mean`, which no "
            "reference of demo defines (did you mean `row_means`?): a staff error") in "\n".join(found), found
    assert any(f"test_hidden.py:{call}: the suite asks the student for `doubel`" in p for p in found), found
    code, out = run_validate(course)
    assert code == 2 and "nothing was graded" in out and f"test_hidden.py:{line}" in out, out


def test_suite_keys_reads_the_registry_and_every_literal_key():
    """The keys a suite can name: its MISCONCEPTIONS registry and every literal misconception= (both branches of
    a conditional), never a string that only decides the branch; a literal key missing from the registry is a
    problem at its line."""
    import ast as _ast

    from autograder.authoring.lint import suite_keys

    src = (
        'MISCONCEPTIONS = {"a": "Sentence a.", "b": "Sentence b."}\n'
        "def test_x(student):\n"
        '    fail("x", misconception="a" if out["epoch"] == 1 else "c")\n'
        '    check(1, "y", misconception=key.rstrip("12"))\n'
    )
    found: list = []
    keys = suite_keys(_ast.parse(src), Path("test_hidden.py"), found, "ex")
    assert keys.registry == {"a": "Sentence a.", "b": "Sentence b."}
    assert set(keys.named) == {"a", "b", "c"}
    assert [(p.line, p.message.split(":")[0]) for p in found] == [(3, "misconception key 'c' is not in "
                                                                        "MISCONCEPTIONS (line 1)")]
    bad: list = []
    suite_keys(_ast.parse('MISCONCEPTIONS = {"a": f"{x}"}\n'), Path("t.py"), bad)
    assert bad and "literal dict" in bad[0].message


def test_suite_keys_see_every_dict_keyed_form_of_a_misconception():
    """Issue 23: the keys of ``misconceptions={...}`` dicts, written in place, bound to a name, filled by item,
    built by a comprehension, returned by a helper or handed to a helper that names the key, are keys the suite
    can name (validate fails one no mutant exercises), with their literal sentences for the sentence check; a
    dict of other things (sizes, options) is not."""
    import ast as _ast

    from autograder.authoring.lint import suite_keys

    src = (
        "def _cube(x):\n"
        '    return {"from_helper": ("It looks like a helper sentence, long enough.", x)}\n'
        "def _cube2(x):\n"
        '    return {"lazy_helper": ("It looks like a lazy helper sentence, long enough.", x)}\n'
        "def _judge(value, wrong, msg):\n"
        "    fits = [(key, why) for key, (why, v) in wrong.items() if v == value]\n"
        "    fail(msg, misconception=fits[0][0])\n"
        "def _linear(student, args, kwargs):\n"
        "    shown = [f'{k}={v}' for k, v in kwargs.items()]\n"
        "    fail('x', misconception=shown[0])\n"
        "def test_x(student):\n"
        '    assert_close(1, 2, misconceptions={"in_place": ("It looks like the in-place sentence here.", 3)})\n'
        '    wrong = {"bound": ("It looks like the bound sentence, written out.", 4)}\n'
        '    wrong["by_item"] = ("It looks like the by-item sentence, written out.", 5)\n'
        '    wrong.update({"updated": ("It looks like the updated sentence, written out.", 6)})\n'
        "    assert_close(1, 2, misconceptions={k: (m, v) for k, (m, v) in wrong.items()})\n"
        "    assert_close(1, 2, misconceptions=_cube(1))\n"
        '    assert_close(1, 2, misconceptions=lambda: {"lazy": ("It looks like the lazy sentence, written.", 8)})\n'
        "    assert_close(1, 2, misconceptions=lambda x=1: _cube2(x))\n"
        '    _judge(1, {"via_judge": ("It looks like the judged sentence, written out.", 7)}, "m")\n'
        '    _linear(student, (3, 4), {"bias": False})\n'
        '    spec = {"sizes": [1, 2], "lr": 0.1}\n'
    )
    keys = suite_keys(_ast.parse(src), Path("test_hidden.py"))
    assert set(keys.named) == {"in_place", "bound", "by_item", "updated", "from_helper", "via_judge", "lazy",
                               "lazy_helper"}
    assert keys.sentences["via_judge"] == "It looks like the judged sentence, written out."
    assert keys.sentences["from_helper"].startswith("It looks like a helper")


def test_new_without_an_exercise_creates_an_assignment_or_a_copy_without_its_validation_record(course: Path,
                                                                                                capsys):
    """issue 26, item 15: `torchgrader new ID` makes a whole assignment; `--from OTHER` copies one, and the copy
    has passed nothing (the original's record stays behind)."""
    from autograder.authoring.stamp import STAMP, stamp_path, validated, write_stamp
    from autograder.cli import main

    assert main(["new", "week2", "--course", str(course)]) == 0
    assert "created assignment 'week2': an empty assignment" in capsys.readouterr().out
    assert tomllib.loads((course / "assignments/week2/assignment.toml").read_text())["exercises"] == []
    assert (course / "solutions/week2").is_dir()
    assert main(["new", "week2", "ex1", "--course", str(course)]) == 0  # then exercises, as before
    assert load_assignment("week2", course).ids == ["ex1"]
    capsys.readouterr()

    write_stamp(course, "demo", "full")
    assert validated(course, "demo")[0]
    (course / "solutions/demo/basics/__pycache__").mkdir()
    (course / "solutions/demo/basics/__pycache__/x.pyc").write_bytes(b"\0")
    assert main(["new", "demo2024", "--from", "demo", "--course", str(course)]) == 0
    assert "its validation record is not copied" in capsys.readouterr().out
    assert not stamp_path(course, "demo2024").exists() and not list(course.glob(f"solutions/demo2024/**/{STAMP}"))
    assert not (course / "solutions/demo2024/basics/__pycache__").exists()
    copy = load_assignment("demo2024", course)
    assert copy.ids == ["basics", "counter"] and copy.exercise("basics").reference.is_file()
    meta = tomllib.loads((course / "assignments/demo2024/assignment.toml").read_text())
    assert meta.get("id", "demo2024") == "demo2024" and meta["title"].startswith("TODO")
    assert any("the title is still the scaffold's TODO" in p for p in problems(course, "demo2024"))
    assert not validated(course, "demo2024")[0]  # the copy must pass validate itself before release
    assert validated(course, "demo")[0]  # the original is untouched
    assert main(["new", "demo", "--course", str(course)]) == 2
    assert "already exists: `new` never overwrites an assignment" in capsys.readouterr().err
    assert main(["new", "x", "--from", "nope", "--course", str(course)]) == 2
    assert "no assignment 'nope' to copy" in capsys.readouterr().err


def test_validate_names_the_functions_no_public_test_touches(course: Path):
    """issue 26, item 2: a function students write that no public test calls fails validate's coverage row."""
    public = course / "assignments/demo/basics/public_test.py"
    public.write_text(public.read_text().split("    x = torch.tensor")[0])  # only double() is checked publicly
    facts = lint_assignment(course, "demo")
    assert facts["basics"].untouched == ["row_means"] and facts["counter"].untouched == []
    code, out = run_validate(course, static_only=True)
    assert code == 1, out
    assert re.search(r"FAIL +public tests cover +no public test calls `row_means`: a student whose code is wrong "
                     r"there sees every public test pass", out), out
    assert re.search(r"ok +public tests cover +every function students write \(Counter\)", out), out


def test_every_exercise_of_the_real_assignments_has_each_function_checked_publicly():
    for assignment in ("pytorch-fundamentals", "distributed-training"):
        facts = lint_assignment(ROOT, assignment)
        assert {ex: f.untouched for ex, f in facts.items() if f.untouched} == {}, assignment
