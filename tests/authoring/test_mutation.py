"""Mutation analysis (issue 44, item 3): mechanical mutants of each reference, graded on its hidden suite;
the survivors recorded per exercise, and the record held to the references as they are now."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from autograder.assignment import MUTATION_RECORD, ExerciseLayout, load_assignment
from autograder.authoring.change import applied
from autograder.authoring.mutation import EQUIVALENT, check_record, generate, given_names
from tests.helpers import DEMO_COURSE, ROOT

pytest.importorskip("mutmut", reason="the mutation operators are mutmut's (pip install -e '.[mutation]')")

SAMPLE = '''import torch


def f(x, y, n):
    """A docstring is never mutated."""
    z = torch.relu(x) + y
    z += 1
    w = z.clone()
    w.mul_(2)
    if n > 0:
        w = w.sum(dim=0)
    with torch.no_grad():
        v = torch.maximum(x, y)
    return w, v
'''


def test_the_generator_makes_each_kind_of_mutant_as_a_change_to_the_reference(tmp_path: Path):
    mutants = generate(SAMPLE)
    changes = {m.operator: [] for m in mutants}
    for m in mutants:
        changes[m.operator].append(m.change)
    # mutmut's operators (operator swaps, constants) and this project's (statements, calls, in-place)
    expect = {
        "swap_op": "+    z = torch.relu(x) - y",
        "number": "+    z += 2",
        "drop_statement": "+    pass",
        "swap_arguments": "+        v = torch.maximum(y, x)",
        "drop_call": "+    z = x + y",
        "replace_call": "+        w = w.mean(dim=0)",
        "in_place": "+    w.mul(2)",
        "out_of_place": "+    z = z + 1",
    }
    for op, line in expect.items():
        assert any(line in c.splitlines() for c in changes.get(op, [])), (op, changes.get(op))
    # the with block run without its context manager
    assert any("+    v = torch.maximum(x, y)" in c.splitlines() for c in changes["drop_statement"])
    assert not any("docstring" in c for c in changes.get("string", []))
    # each is a change mutant's CHANGE: applied to the reference, it is the mutant's code
    ref = tmp_path / "reference.py"
    ref.write_text(SAMPLE)
    for m in mutants:
        case = tmp_path / "m.py"
        case.write_text(f"CHANGE = r'''\n{m.change}'''\n")
        assert applied(case, ref) == m.code, m.id
    assert len({m.id for m in mutants}) == len(mutants)
    # an edit elsewhere in the reference keeps every id (ids name the lines changed, not where they stand)
    moved = generate(SAMPLE.replace("import torch\n", "import torch\nimport math\n"))
    assert {m.id for m in mutants} <= {m.id for m in moved}


def test_code_the_stub_gives_students_is_not_mutated():
    """The compile exercise's ChattyMLP is given, in the stub as in the reference: its 43 mutants were not a
    student's mistakes, and no suite should catch them."""
    given = "class Given:\n    def f(self):\n        return 1 + 2\n"
    ref = f"import torch\n\n\n{given}\n\ndef mine(x):\n    return x + 1\n"
    stub = f"import torch\n\n\n{given}\n\ndef mine(x):\n    raise NotImplementedError\n"
    assert given_names(ref, stub) == {"Given"}
    assert {m.function for m in generate(ref, given_names(ref, stub))} == {"mine"}
    assert {m.function for m in generate(ref)} == {"mine", "Given.f"}


def _copy_demo(tmp_path: Path) -> Path:
    dest = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, dest, ignore=shutil.ignore_patterns("__pycache__", ".validated*"))
    return dest


def test_mutate_grades_every_mutant_in_warm_workers_and_records_the_survivors(tmp_path: Path, capsys):
    """The command end to end on the demo: every mutant graded on the hidden suite; a suite that misses a mistake
    leaves a survivor in mutation.toml, which validate then reports until it is explained."""
    from autograder.authoring.validate import validate
    from autograder.cli import main

    course = _copy_demo(tmp_path)
    suite = course / "solutions/demo/basics/test_hidden.py"
    # drop the test on row_means: its mutants now survive
    suite.write_text(suite.read_text().split("@pytest.mark.points(2)")[0] + "\n\n@pytest.mark.points(2)\n"
                     "def test_free(student):\n    \"\"\"free\"\"\"\n")
    code = main(["mutate", "demo", "--exercise", "basics", "--course", str(course), "--jobs", "2", "-q"])
    out = capsys.readouterr().out
    assert code == 1, out  # open survivors
    m = re.search(r"basics: (\d+) mutants, (\d+) killed, (\d+) survived, 0 not judged", out)
    assert m and int(m[1]) == int(m[2]) + int(m[3]) and int(m[2]) > 0 and int(m[3]) > 0, out
    assert re.search(r"OPEN +row_means/replace_call/\w+", out) and "+    return x.sum(dim=1)" in out, out
    layout = load_assignment("demo", course).exercise("basics")
    check = check_record(layout, regenerate=True)
    assert check.record is not None and check.record.generated == int(m[1]) and check.record.killed == int(m[2])
    assert any("is unexplained" in p for p in check.problems), check.problems
    lines: list[str] = []
    assert validate("demo", course, ["basics"], static_only=True, out=lines.append) == 1
    assert re.search(r"FAIL +mutation score +score \d+% .*unexplained survivor", "\n".join(lines)), lines
    # staff explain every survivor: the record passes, and validate shows the score
    record = layout.mutation_record
    record.write_text(record.read_text().replace('status = "open"\nreason = ""',
                                                 f'status = "{EQUIVALENT}"\nreason = "no test on row_means"'))
    assert check_record(layout, regenerate=True).ok
    lines = []
    assert validate("demo", course, ["basics"], static_only=True, out=lines.append) == 0, lines
    assert re.search(r"ok +mutation score +score 100% \(\d+ of \d+ killed; \d+ equivalent", "\n".join(lines)), lines


def test_a_changed_reference_makes_the_record_stale(tmp_path: Path):
    layout = ExerciseLayout(tmp_path / "pub", tmp_path / "hid")
    layout.hidden_dir.mkdir(parents=True)
    layout.reference.write_text(SAMPLE)
    from autograder.authoring.mutation import reference_digest

    m = next(m for m in generate(SAMPLE) if m.operator == "swap_arguments")
    layout.mutation_record.write_text(
        f'reference = "{reference_digest(SAMPLE)}"\ngenerated = 40\nkilled = 39\n\n[[survivor]]\nid = "{m.id}"\n'
        f'operator = "{m.operator}"\nstatus = "{EQUIVALENT}"\nreason = "maximum is symmetric"\n'
        f"change = '''\n{m.change}'''\n")
    check = check_record(layout, regenerate=True)
    assert check.ok and check.summary() == "score 100% (39 of 39 killed; 1 equivalent; 40 mutants)", check.problems
    # an edit elsewhere: the digest says so (the survivor's change still applies)
    layout.reference.write_text(SAMPLE.replace("z += 1", "z += 3"))
    assert [p for p in check_record(layout).problems if p.startswith("stale:")]
    # the survivor's own line changed: its change no longer applies
    layout.reference.write_text(SAMPLE.replace("torch.maximum(x, y)", "torch.minimum(x, y)"))
    assert any("no longer applies" in p for p in check_record(layout).problems)


def test_each_recorded_analysis_of_the_course_still_matches_its_reference():
    """What .ci/run checks of the analysis (the analysis itself runs outside CI): each exercise's record was
    made on the reference as it is now, each survivor is still a mutant the generator makes, and each is
    explained."""
    recorded = 0
    docs = (ROOT / "docs/authoring.md").read_text()
    for assignment_id in ("pytorch-fundamentals", "distributed-training"):
        for ex in load_assignment(assignment_id, ROOT).exercises:
            check = check_record(ex, regenerate=ex.mutation_record.is_file())
            # the staff guide shows each exercise's score as validate prints it
            assert f"| {assignment_id}/{ex.id} | {check.summary()} |" in docs, f"docs/authoring.md: {ex.id}"
            if check.record is None:
                continue
            recorded += 1
            assert check.ok, f"{ex.id}: {MUTATION_RECORD}: " + "; ".join(check.problems)
    assert recorded >= 5
