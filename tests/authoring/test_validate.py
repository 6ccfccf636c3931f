"""`torchgrader validate` grading phase on the demo course: sound suites pass, weakened ones fail by name."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from autograder.authoring.validate import validate
from tests.helpers import DEMO_COURSE


def run_validate(course: Path, server, **kw) -> tuple[int, str]:
    lines: list[str] = []
    code = validate("demo", course, out=lines.append, server=server, jobs=1, **kw)
    return code, "\n".join(lines)


def test_the_demo_suites_are_sound_and_the_table_says_why(server):
    from autograder.authoring.stamp import stamp_path, validated

    stamp_path(DEMO_COURSE, "demo").unlink(missing_ok=True)
    progress: list[str] = []
    code, out = run_validate(DEMO_COURSE, server, show_feedback=True, progress=progress.append)
    assert code == 0, out
    # --show-feedback: under each mutant, what a student with that mistake reads
    assert re.search(r"mutant column_means .*\n +\| row_means\(x\) averages each row \[failed, 0/2\]: Expected "
                     r"row_means\(x\) to have shape \(3,\), but it has shape \(7,\)\. You averaged columns", out), out
    # a passing validate of the whole assignment is what release asks for
    assert validated(DEMO_COURSE, "demo")[0]
    assert "basics — Tensor basics (4 points)" in out and "counter — A stateful object (2 points)" in out
    for row in ("static checks", "reference", "public tests on reference", "stub", "public tests on stub",
                "alternative sums", "alternative history", "mutant column_means", "mutant squares",
                "mutant ignores_start"):
        assert re.search(rf"^  ok +{row} ", out, re.M), row
    assert re.search(r"mutant column_means +exact +caught \(2/4\) by 1 test\(s\): row_means\(x\) averages each row"
                     r".*; diagnosed as `averages_columns`", out)
    assert re.search(r"mutant squares +exact +caught .*diagnosed as `squares`", out)
    assert re.search(r"mutant ignores_start +generic +caught", out)  # declared `none`: a generic message is right
    assert "basics — Tensor basics (4 points); diagnosis of 2 mutants: 2 exact, 0 generic, 0 wrong" in out
    # graded three times each; an exercise's row names only its own files (issue 26, item 12): the alternative
    # `sums` of basics is graded on counter's suite too, yet it is not shown in counter's row
    assert len(re.findall(r"^  ok +determinism +the reference x3, alternative sums x3: identical points", out,
                          re.M)) == 1, out
    counter_rows = out.split("counter — A stateful object")[1]
    assert re.search(r"^  ok +determinism +the reference x3: identical points", counter_rows, re.M), out
    assert "sums" not in counter_rows, out
    # each progress line says what it is: a public-test run is not a 0-point failure (item 13)
    text = "\n".join(progress)
    assert "reference on every hidden suite: 6/6 points" in text, text
    assert re.search(r"\] public tests on the reference: 2/2 pass \(public tests carry no points\)", text), text
    assert re.search(r"\] public tests on the stub: 0/2 pass \(public tests carry no points\)", text), text
    assert re.search(r"\] mutant basics/column_means on the hidden suites: 4/6 points", text), text
    assert re.search(r"\] alternative basics/sums \(determinism repeat 1\) on the hidden suites: 6/6 points",
                     text), text
    assert not re.search(r"\] (reference|stub): 0/0", text), text
    # a "misconception keys" row (issue 23), a "public tests cover" row (issue 26, item 2) and a NaN-returning
    # mutant row (issue 22) per exercise, and a "mutation score" row (issue 44, item 3; the demo records none)
    assert re.search(r"^  ok +public tests cover +every function students write \(double, row_means\)", out, re.M), out
    assert re.search(r"^  ok +misconception keys ", out, re.M), out
    assert len(re.findall(r"^  ok +NaN-returning mutant +fails every test a wrong finite value fails", out,
                          re.M)) == 2, out
    assert len(re.findall(r"^  ok +unknown wrong answers get no cause +no cause named", out, re.M)) == 2, out
    assert len(re.findall(r"^  ok +mutation score +no mutation analysis recorded", out, re.M)) == 2, out
    assert "27 checks: 27 ok, 0 failing" in out


def test_a_weakened_copy_fails_naming_each_culprit(tmp_path: Path, server):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    basics_pub, basics = course / "assignments/demo/basics", course / "solutions/demo/basics"
    counter_pub, counter = course / "assignments/demo/counter", course / "solutions/demo/counter"
    # 1. the test that catches `column_means` is removed (and the points adjusted): the mutant survives
    hidden = (basics / "test_hidden.py").read_text()
    head, _, _ = hidden.partition("@pytest.mark.points(2)\ndef test_row_means")
    (basics / "test_hidden.py").write_text(head.rstrip() + "\n")
    (basics_pub / "exercise.toml").write_text((basics_pub / "exercise.toml").read_text().replace(
        "points = 4", "points = 2"))
    # 2. a counter mutant that also breaks basics: it loses points outside its exercise
    (counter / "mutants/triples.py").write_text(
        '"""Ignores the start, and redefines double() as tripling."""\n# misconception: none\n\n\n'
        "def double(x):\n    return x * 3\n\n\n"
        "class Counter:\n    def __init__(self, start=0):\n        self.total = 0\n\n"
        "    def add(self, n):\n        self.total += n\n        return self.total\n")
    # 3. a "correct" alternative that is not
    (counter / "alternatives/off_by_one.py").write_text(
        "class Counter:\n    def __init__(self, start=0):\n        self.total = start + 1\n\n"
        "    def add(self, n):\n        self.total += n\n        return self.total\n")
    # 4. a stub that gives away double(), so it earns points
    (basics_pub / "stub.py").write_text((basics_pub / "stub.py").read_text().replace(
        "def double(x):\n    raise NotImplementedError", "def double(x):\n    return x * 2"))
    # 5. a public test that the reference fails
    (counter_pub / "public_test.py").write_text((counter_pub / "public_test.py").read_text().replace(
        "total == 3", "total == 4"))

    code, out = run_validate(course, server)
    assert code == 1, out
    fails = [ln for ln in out.splitlines() if re.match(r"  FAIL \w+: ", ln)]
    text = "\n".join(fails)
    assert re.search(r"FAIL basics: mutant column_means: SURVIVED: mutant column_means.py earned full marks "
                     r"\(2/2\) on basics; misconception: Averages the columns \(dim=0\) instead of the rows\.; "
                     r"it changes `row_means`; no hidden test exercises `row_means`", text), out
    assert re.search(r"FAIL counter: mutant triples: caught on counter, but it also lost points outside its "
                     r"exercise: basics 1/2", text), out
    assert "FAIL counter: alternative off_by_one: a correct alternative lost points (0/2)" in text
    assert "FAIL basics: stub: should earn 0 but earned 2/2; passing on the stub: double(x) doubles every entry" in text
    assert "FAIL counter: public tests on reference: should pass on the reference: Counter(3).total is 3" in text
    assert len(fails) == 5, text


def test_a_surviving_mutant_names_the_tests_that_should_have_caught_it(tmp_path: Path, server):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    # a mutant no test can catch (it is equivalent to the reference): the report names the tests that call it
    (course / "solutions/demo/basics/mutants/abs_means.py").write_text(
        '"""Branches on the sign of x (the same value either way)."""\n# misconception: none\nimport torch\n\n\n'
        "def double(x):\n    return x * 2\n\n\n"
        "def row_means(x):\n    return x.mean(dim=1) if (x >= 0).all() else x.mean(dim=1)\n")
    code, out = run_validate(course, server, exercises=["basics"])
    assert code == 1
    assert re.search(r"SURVIVED: mutant abs_means.py earned full marks \(4/4\) on basics; misconception: Branches on "
                     r"the sign of x \(the same value either way\)\.; it changes `row_means`; "
                     r"tests that should have caught it, and passed: "
                     r"test_row_means \(test_hidden.py:25\)\.", out), out


def test_validate_checks_the_diagnosis_not_only_the_score(tmp_path: Path, server):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    basics, counter = course / "solutions/demo/basics", course / "solutions/demo/counter"
    # 1. a mutant whose feedback names another mutant's misconception
    (basics / "mutants/cubes.py").write_text(
        '"""Cubes the values (the suite blames squaring)."""\n# misconception: cubes\n\n\n'
        "def double(x):\n    return x * x\n")
    # 2. a mutant that declares a key its feedback never carries
    ignores = counter / "mutants/ignores_start.py"
    ignores.write_text(ignores.read_text().replace("# misconception: none", "# misconception: ignores_start"))
    # 3. an "alternative" that is wrong and is told a misconception
    (basics / "alternatives/squares_too.py").write_text(
        "def double(x):\n    return x * x\n\n\ndef row_means(x):\n    return x.mean(dim=1)\n")

    code, out = run_validate(course, server, repeats=1)
    assert code == 1, out
    fails = "\n".join(ln for ln in out.splitlines() if re.match(r"  FAIL \w+: ", ln))
    assert re.search(r"FAIL basics: mutant cubes: its feedback names the wrong misconception: `squares` "
                     r"\(declared by squares; in double\(x\) doubles every entry\); it declares `cubes`", fails), out
    assert re.search(r"^  FAIL +mutant cubes +wrong ", out, re.M), out
    assert re.search(r"FAIL counter: mutant ignores_start: its feedback names no misconception, though it declares "
                     r"`ignores_start`", fails), out
    assert re.search(r"^  FAIL +mutant ignores_start +generic ", out, re.M), out
    assert re.search(r"FAIL basics: alternative squares_too: a correct alternative lost points \(3/4\).*; it "
                     r"received misconception message\(s\): double\(x\) doubles every entry \[squares\]", fails), out
    assert "diagnosis of 3 mutants: 2 exact, 0 generic, 1 wrong" in out
    assert len(fails.splitlines()) == 3, fails
    assert "determinism" not in out  # --repeat 1 grades each submission once


FLAKY = '''
    import pathlib
    f = pathlib.Path({path!r})
    n = int(f.read_text()) + 1
    f.write_text(str(n))
    check(n % 2 == 1, "flaky on purpose")
'''


def test_validate_fails_when_grading_the_same_submission_twice_differs(tmp_path: Path, server):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    gradings = tmp_path / "gradings.txt"
    gradings.write_text("0")
    hidden = course / "solutions/demo/counter/test_hidden.py"
    # a hidden test whose verdict depends on how many times it has run: one grading in two passes
    doc = '    """Counter driven by a probe"""\n'
    hidden.write_text(hidden.read_text().replace(doc, doc + FLAKY.format(path=str(gradings)).lstrip("\n")))
    code, out = run_validate(course, server, exercises=["counter"])
    assert code == 1, out
    assert re.search(r"FAIL counter: determinism: points differ between gradings of the same submission: "
                     r"the reference: Counter driven by a probe earned [01], [01], [01]", out), out
def test_a_grader_error_fails_validate_even_with_withheld_points(tmp_path: Path, server):
    """A probe that cannot import what it needs is a grader error: the student keeps the points, but
    validate must not read the smaller maximum as full marks."""
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    basics = course / "solutions/demo/basics"
    (basics / "probes.py").write_text("def broken(mod):\n    import a_module_the_grader_forgot\n")
    hidden = (basics / "test_hidden.py").read_text()
    (basics / "test_hidden.py").write_text(hidden.replace(
        '    """row_means(x) averages each row"""\n',
        '    """row_means(x) averages each row"""\n    sandbox.probe("broken")\n').replace(
        "def test_row_means(student):", "def test_row_means(student, sandbox):"))
    code, out = run_validate(course, server, exercises=["basics"])
    assert code == 1, out
    assert re.search(r"FAIL +reference +the grader itself failed in 1 test\(s\), first: row_means", out), out


def test_parallel_validate_grades_on_the_batch_workers_and_reports_the_same(monkeypatch, server):
    """With --jobs 2 every case is a job of the batch's process backend (no pool of validate's own), each job
    names its suites, and the table is the serial run's, word for word."""
    from autograder.batch.backends.process import ProcessBackend

    seen: list[tuple[Path, dict | None]] = []
    delivered: list[Path] = []
    real_run = ProcessBackend.grade_jobs

    def spy(self, jobs, deliver):
        seen.extend((j.path, j.options) for j in jobs)

        def counted(job, result, error, worker):
            delivered.append(job.path)
            deliver(job, result, error, worker)

        return real_run(self, jobs, counted)

    monkeypatch.setattr(ProcessBackend, "grade_jobs", spy)
    serial_code, serial = run_validate(DEMO_COURSE, server, show_feedback=True)
    assert seen == []  # --jobs 1 grades in this process
    lines: list[str] = []
    code = validate("demo", DEMO_COURSE, out=lines.append, server=server, jobs=2, show_feedback=True)
    parallel = "\n".join(lines)
    assert code == serial_code == 0, parallel
    assert parallel.replace(" (2 parallel workers)", "") == serial
    # every case but the reference (graded first, in this process): the public suites on the reference and the
    # stub, then the hidden ones on the stub, each alternative and mutant, and the repeated gradings
    paths = [p for p, _ in seen]
    assert sorted(delivered) == sorted(paths) and len(paths) == len(set(paths))
    public = [p.name for p, o in seen if o and o["public"]]
    hidden = [p.stem for p, o in seen if o and not o["public"]]
    assert public == ["reference.py", "stub.py"] and all(o and o["public"] for _, o in seen[:2])
    assert "reference" not in hidden and "stub" in hidden
    assert {h.split("--")[0] for h in hidden} == {"stub", "alternative", "mutant", "repeat1", "repeat2", "nan",
                                                  "perturbed", "identity"}, hidden  # issue 22: the NaN twin of a mutant
    assert len(hidden) + len(public) == len(seen)  # every job names its suites


def test_a_worker_failure_in_parallel_validate_keeps_the_log_its_message_names(monkeypatch, tmp_path: Path):
    """The error staff read names the worker's log: that folder must outlive validate's scratch folder."""
    from autograder.assignment import load_assignment
    from autograder.authoring.validate import Task, grade_tasks
    from autograder.batch.backends.process import ProcessBackend

    logs: list[Path] = []

    def failing(self, jobs, deliver):
        logs.append(self.log_dir)
        (self.log_dir / "worker-0.log").write_text("Traceback: the judge died\n")
        for job in jobs:
            deliver(job, None, f"the worker is gone; its log ({self.log_dir / 'worker-0.log'}) ends with: ...",
                    "worker 0")

    monkeypatch.setattr(ProcessBackend, "grade_jobs", failing)
    demo = load_assignment("demo", DEMO_COURSE)
    ref = demo.exercises[0].reference
    copies = []
    for i in range(3):
        copies.append(tmp_path / f"copy{i}.py")
        shutil.copyfile(ref, copies[-1])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (out,) = grade_tasks(demo, [Task(copies, None)], scratch, jobs=2)
    assert {r.status for r in out.values()} == {"internal_error"}
    assert all(str(logs[0]) in r.error for r in out.values())
    assert (logs[0] / "worker-0.log").read_text().startswith("Traceback")
    assert not logs[0].is_relative_to(scratch)
    shutil.rmtree(logs[0])


REGISTRY = '''
MISCONCEPTIONS = {
    "squares": "You squared the values instead of doubling them.",
    "averages_columns": "You averaged columns (dim=0) instead of rows.",
    "negates": "You negated the values.",
}
'''


def test_validate_reads_the_registry_and_fails_a_key_no_mutant_exercises(tmp_path: Path, server):
    """Issue 23: one registry (MISCONCEPTIONS) maps each key to its sentence; validate checks what the student
    reads against it (another key's sentence in the text, keyed or not, is a wrong diagnosis) and fails a key
    the suite can name that no mutant's feedback receives, with the list."""
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    basics = course / "solutions/demo/basics"
    suite = basics / "test_hidden.py"
    text = suite.read_text().replace("from autograder.judge import assert_close, check, shares_storage\n",
                                     "from autograder.judge import assert_close, check, shares_storage\n"
                                     + REGISTRY)
    # the squares entry gives the facts only: grading appends the registered sentence
    text = text.replace('misconceptions={"squares": ("You squared the values instead of doubling them.", x * x)}',
                        'misconceptions={"squares": ("", x * x)}')
    # a hint that says another key's sentence without its key: the text blames that misconception all the same
    text = text.replace('name="row_means(x)",\n', 'name="row_means(x)", hint="You averaged columns (dim=0) '
                                                 'instead of rows.",\n')
    suite.write_text(text)
    (basics / "mutants/row_sums.py").write_text(
        '"""Sums the rows instead of averaging them."""\n# misconception: none\nimport torch\n\n\n'
        "def row_means(x):\n    return x.sum(dim=1)\n")

    code, out = run_validate(course, server, repeats=1, show_feedback=True)
    assert code == 1, out
    fails = [ln for ln in out.splitlines() if re.match(r"  FAIL \w+: ", ln)]
    assert any(re.search(r"FAIL basics: misconception keys: misconception key\(s\) the suite can name but no "
                         r"mutant's feedback receives: `negates` \(test_hidden.py:\d+\)", ln) for ln in fails), out
    assert any(re.search(r"FAIL basics: mutant row_sums: its feedback names the wrong misconception: "
                         r"`averages_columns` \(declared by column_means; in row_means\(x\) averages each row\)",
                         ln) for ln in fails), out
    # the causal hint is said to wrong answers nothing predicts, too (issue 44)
    assert any(re.search(r"FAIL basics: unknown wrong answers get no cause: .* perturbed: row_means\(x\) averages "
                         r"each row \[averages_columns\]", ln) for ln in fails), out
    assert len(fails) == 3, "\n".join(fails)
    # the squares mutant still reads its sentence, from the registry
    assert re.search(r"mutant squares +exact .*\n(?: +\|.*\n)*? +\| double\(x\) doubles every entry .*You squared "
                     r"the values instead of doubling them\.", out), out
    assert re.search(r"^  ok +misconception keys +3 key\(s\)|^  ok +misconception keys", out, re.M), out  # counter
