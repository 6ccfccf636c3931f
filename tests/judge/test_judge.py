"""The engine end to end on the demo assignment: isolation of failures, messages, outputs."""

from __future__ import annotations

import csv
import json
import shutil
import signal
import subprocess
import sys

import nbformat
import pytest
import torch

from autograder.assignment import AssignmentError, load_assignment
from autograder.grade import GradeOptions, grade
from autograder.judge import Failure, assert_close, gradcheck
from autograder.report.submission import feedback_markdown
from autograder.session import Budget
from tests.helpers import DEMO_COURSE, ROOT

REF = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)
COUNTER = (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()


def grade_sources(server, demo, tmp_path, **sources):
    paths = []
    for name, src in sources.items():
        p = tmp_path / f"{name}.py"
        p.write_text(src)
        paths.append(p)
    opts = GradeOptions(budget=Budget(cell_seconds=3, submission_seconds=60))
    return {r.submission: r for r in grade(demo, paths, options=opts, server=server)}


def by_name(r):
    return {t.name: t for e in r.exercises for t in e.tests}


def test_reference_full_marks_and_stub_zero_with_messages(server, demo, tmp_path):
    stub = "\n# %%\n".join(p.read_text() for p in sorted((DEMO_COURSE / "assignments/demo").glob("*/stub.py")))
    rs = grade_sources(server, demo, tmp_path, ref=REF, stub=stub)
    assert rs["ref"].total == rs["ref"].max_total == 6
    assert rs["stub"].total == 0
    for t in by_name(rs["stub"]).values():
        assert t.status == "error" and "not implemented yet" in t.message


def test_a_syntax_error_costs_only_the_exercise_that_depends_on_it(server, demo, tmp_path):
    src = (
        "import torch\n# %%\ndef double(x)\n    return x * 2\n\ndef row_means(x):\n    return x.mean(1)\n# %%\n"
        + COUNTER
    )
    r = grade_sources(server, demo, tmp_path, broken=src)["broken"]
    assert r.exercise("counter").points == 2
    assert r.exercise("basics").points == 0
    bad = [c for c in r.cells if c.status != "ok"]
    assert len(bad) == 1 and "SyntaxError" in bad[0].message and "line 3" in bad[0].message
    msg = by_name(r)["double(x) doubles every entry"].message
    assert "`double` is not defined" in msg and "SyntaxError" in msg and "line 2" in msg
    # one cause for every test needing a name of that cell, whatever the name: feedback says it once
    causes = {t.cause for t in r.exercise("basics").tests}
    assert len(causes) == 1 and "SyntaxError" in next(iter(causes)) and "`double`" not in next(iter(causes))
    md = feedback_markdown(r)
    assert md.count(next(iter(causes))) == 1 and "Problem 1 cost all 3 tests of this exercise (4 points)" in md
    assert "\\`row_means\\` is not defined: see problem 1 above" in md  # the test says only what is its own


def test_an_exception_in_a_cell_is_recorded_and_later_cells_still_run(server, demo, tmp_path):
    src = REF + "\n# %%\nimport missing_module_xyz\n# %%\ndef row_means(x):\n    return x.mean(dim=1)\n"
    r = grade_sources(server, demo, tmp_path, s=src)["s"]
    assert r.total == 6
    bad = [c for c in r.cells if c.status != "ok"]
    assert len(bad) == 1 and "ModuleNotFoundError" in bad[0].message


def test_a_hang_costs_only_that_test_and_the_sandbox_is_restarted(server, demo, tmp_path):
    src = (
        "def double(x):\n    while x.dim() == 2:\n        pass\n    return x * 2\n\n"
        "def row_means(x):\n    return x.mean(dim=1)\n# %%\n" + COUNTER
    )
    r = grade_sources(server, demo, tmp_path, hang=src)["hang"]
    t = by_name(r)
    assert t["double(x) doubles every entry"].status == "timeout"
    assert "did not finish within 3 s" in t["double(x) doubles every entry"].message
    # the tests after the hang ran in a fresh sandbox and passed
    assert t["double(x) leaves x unchanged"].status == "passed"
    assert t["row_means(x) averages each row"].status == "passed"
    assert r.total == 5


def test_student_tracebacks_show_only_student_lines(server, demo, tmp_path):
    src = (
        "import torch\n\ndef helper(x):\n    return x.reshape(7, 7)\n\ndef double(x):\n    return helper(x)\n\n"
        "def row_means(x):\n    return x.mean(dim=1)\n# %%\n" + COUNTER
    )
    t = by_name(grade_sources(server, demo, tmp_path, tb=src)["tb"])["double(x) doubles every entry"]
    assert t.status == "error" and "RuntimeError" in t.message
    assert "line 7, in double" in t.message and "line 4, in helper" in t.message
    assert "autograder" not in t.message and "site-packages" not in t.message


def test_wrong_answers_get_teaching_messages(server, demo, tmp_path):
    src = "def double(x):\n    return x * x\n\ndef row_means(x):\n    return x.mean(dim=0)\n# %%\n" + COUNTER
    t = by_name(grade_sources(server, demo, tmp_path, wrong=src)["wrong"])
    assert "You squared the values" in t["double(x) doubles every entry"].message
    assert "shape (3,)" in t["row_means(x) averages each row"].message
    assert "averaged columns" in t["row_means(x) averages each row"].message


def test_submission_budget_stops_a_slow_submission(server, demo, tmp_path):
    src = "import time\ntime.sleep(2)\n# %%\ntime.sleep(2)\n# %%\n" + REF
    p = tmp_path / "slow.py"
    p.write_text(src)
    opts = GradeOptions(budget=Budget(cell_seconds=10, submission_seconds=3))
    r = grade(demo, [p], options=opts, server=server)[0]
    assert r.total < 6
    assert any(c.status == "timeout" for c in r.cells)


def test_suite_without_points_is_refused_naming_the_test(server, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    hidden = course / "solutions/demo/basics/test_hidden.py"
    hidden.write_text(hidden.read_text() + "\n\ndef test_forgot_points(student):\n    pass\n")
    a = load_assignment("demo", course)
    p = tmp_path / "s.py"
    p.write_text(REF)
    with pytest.raises(AssignmentError, match="test_forgot_points has no @pytest.mark.points"):
        grade(a, [p], server=server)


def test_missing_exercise_files_are_named(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    (course / "solutions/demo/counter/test_hidden.py").unlink()
    with pytest.raises(AssignmentError, match="counter/test_hidden.py: missing"):
        load_assignment("demo", course)


def test_cli_writes_gradebook_and_results_and_survives_a_corrupt_notebook(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(REF)
    (subs / "bob.ipynb").write_text("{ this is not a notebook")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(REF)])
    nbformat.write(nb, str(subs / "carol.ipynb"))
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder.cli",
            "grade",
            str(subs),
            "--assignment",
            "demo",
            "--course",
            str(DEMO_COURSE),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Sandbox protections" in proc.stdout and "alice: 6 / 6" in proc.stdout
    with open(out / "gradebook.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["submission"] for r in rows] == ["alice", "bob", "carol"]
    assert list(rows[0]) == [
        "submission", "student", "name", "basics", "counter", "total", "max_total", "status", "flagged", "review"
    ]
    assert rows[0]["total"] == "6" and rows[2]["total"] == "6"
    assert rows[1]["status"] == "load_error" and rows[1]["total"] == "0"
    gs = json.loads((out / "alice" / "results.json").read_text())
    assert gs["score"] == 6 and len(gs["tests"]) == 5
    bob = json.loads((out / "bob" / "results.json").read_text())
    assert "not a readable Jupyter notebook" in bob["output"]
    # hidden test code never reaches student-facing output
    everything = "".join(p.read_text() for p in out.rglob("*") if p.suffix in (".md", ".html", ".json", ".csv"))
    assert "def test_" not in everything and "misconceptions=" not in everything


def test_assert_close_messages():
    e = torch.ones(3, dtype=torch.float64)
    with pytest.raises(Failure, match="dtype float64, but it is float32"):
        assert_close(e.float(), e)
    with pytest.raises(Failure, match=r"shape \(3,\), but it has shape \(1, 3\)"):
        assert_close(e[None], e)
    with pytest.raises(Failure, match="contains nan at index"):
        assert_close(torch.tensor([1.0, float("nan"), 1.0], dtype=torch.float64), e)
    with pytest.raises(Failure, match="largest difference is at index \\(2,\\): got 4, expected 1. Too big."):
        assert_close(
            torch.tensor([1.0, 1.0, 4.0], dtype=torch.float64),
            e,
            misconceptions={"Too big.": e * 4 - 3 * e + torch.tensor([0, 0, 3.0], dtype=torch.float64)},
        )
    with pytest.raises(Failure, match="NumPy"):
        assert_close(e.numpy(), e)
    assert_close(e + 1e-13, e)


def test_judge_side_gradcheck_catches_a_wrong_backward():
    x = torch.randn(5, dtype=torch.float64)

    def f(v):
        return (v**3).sum()

    gradcheck(f, [x], [3 * x**2])
    with pytest.raises(Failure, match="disagrees with finite differences"):
        gradcheck(f, [x], [x**2])


def test_without_isolation_the_report_says_so(server, demo, tmp_path):
    p = tmp_path / "s.py"
    p.write_text("import os\nWHERE = os.getcwd()\n# %%\n" + REF)
    r = grade(demo, [p], options=GradeOptions(isolate=False), server=server)[0]
    assert r.total == 6
    assert r.protections["network"].startswith("NOT isolated")
    assert r.protections["filesystem"].startswith("NOT isolated")


def test_a_later_sandbox_loads_only_the_probes_of_exercises_with_tests_left(tmp_path, monkeypatch):
    """Probes still load before any student cell; an exercise whose tests are done is not loaded again."""
    from autograder import session as session_mod

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    (course / "solutions/demo/basics/probes.py").write_text("def noop(mod):\n    return 1\n")
    with open(course / "solutions/demo/counter/test_hidden.py", "a") as f:
        f.write(
            "\n\n@pytest.mark.points(1)\ndef test_counter_after_fresh(sandbox):\n"
            '    """Counter in a fresh sandbox"""\n    sandbox.fresh()\n'
            '    check(sandbox.probe("count_to", 4) == 7, "Counter(1) after add(0..3) should be 7.")\n'
        )
    loaded: list[list[str]] = []
    real = session_mod.Session._load_probes

    def spy(self, sb):
        loaded.append(sorted(self.probes))
        return real(self, sb)

    monkeypatch.setattr(session_mod.Session, "_load_probes", spy)
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    r = grade(load_assignment("demo", course), [sub])[0]
    assert r.total == r.max_total == 7
    assert loaded == [["basics", "counter"], ["counter"]]


def test_a_streamed_grade_keeps_no_result_once_delivered(server, demo, tmp_path):
    """A batch worker streams hundreds of jobs through one grade() call: each result goes to on_result and
    nowhere else, so the judge's memory stays flat (it once kept every result: +80 MiB per 800 submissions)."""
    import gc
    import weakref

    paths = []
    for i in range(3):
        paths.append(tmp_path / f"ref{i}.py")
        paths[-1].write_text(REF)
    refs: list[weakref.ref] = []
    totals: list[float] = []

    def deliver(r):
        totals.append(r.total)
        refs.append(weakref.ref(r))

    returned = grade(demo, iter(paths), on_result=deliver, server=server, stream=True)
    gc.collect()
    assert totals == [6, 6, 6] and returned == []
    assert [r() for r in refs] == [None, None, None]


def test_the_protected_paths_with_a_generator_are_a_lists(server, demo, tmp_path, monkeypatch):
    """Issue 21: a generator of paths once dropped the submissions' folders from the protected paths (only
    ``options.protected`` guarded anything). Each sandbox is now denied its own submission's folder and
    every earlier one, streamed or not; the last submission's sandbox sees exactly what a list gives."""
    from autograder.judge import plugin as plugin_mod

    paths = []
    for name in ("alice", "bob"):
        (tmp_path / name).mkdir()
        paths.append(tmp_path / name / "sub.py")
        paths[-1].write_text(REF)
    seen: list[list[str]] = []  # what each submission's sandboxes are denied, as its session starts
    real = plugin_mod.Session

    def spy(server_, sub, config, *a, **kw):
        seen.append(list(config.protected))
        return real(server_, sub, config, *a, **kw)

    monkeypatch.setattr(plugin_mod, "Session", spy)
    totals: list[float] = []
    grade(demo, (p for p in paths), on_result=lambda r: totals.append(r.total), server=server, stream=True)
    streamed, seen = seen, []
    grade(demo, paths, server=server)
    listed = seen
    assert totals == [6, 6]
    folders = [str(p.parent.resolve()) for p in paths]
    assert folders[0] in streamed[0] and set(folders) <= set(streamed[1])
    assert set(streamed[1]) == set(listed[0]) == set(listed[1])
    assert str(demo.course / "solutions") in streamed[0]


def test_a_sandbox_server_that_never_started_stops_grading_with_its_reason(demo, tmp_path):
    """The judge reads the first notebook while the server still imports torch; if the server then
    never becomes ready, grading stops with why, instead of scoring the submission 0 for it."""
    from autograder.sandbox.client import SandboxServer, ServerFailed

    dead = SandboxServer(warm_compiler=False)
    dead.proc.kill()
    dead.proc.wait()
    sub = tmp_path / "ref.py"
    sub.write_text(REF)
    delivered = []
    try:
        with pytest.raises(ServerFailed, match="failed to start"):
            grade(demo, [sub], server=dead, on_result=delivered.append)
    finally:
        dead.close()
    assert delivered == []


def test_a_raw_torch_error_reads_as_the_students_line_and_one_sentence(server, demo, tmp_path):
    """Issue 23: a raw PyTorch error reaches the student with the line of their code and one sentence on
    what it usually means; the grader's frames (`<probes ...>`) and package paths never do."""
    src = (
        "import torch\n\ndef double(x):\n    w = torch.ones(5, 3, dtype=x.dtype)\n    return x @ w\n\n"
        "def row_means(x):\n    return x.mean(dim=1)\n# %%\n" + COUNTER
    )
    t = by_name(grade_sources(server, demo, tmp_path, mm=src)["mm"])["double(x) doubles every entry"]
    assert t.status == "error" and "mat1 and mat2 shapes cannot be multiplied" in t.message, t.message
    assert "line 5, in double" in t.message and "return x @ w" in t.message, t.message
    assert "inner sizes differ" in t.message and t.message.count("\n") <= 4, t.message
    assert "<probes" not in t.message and "site-packages" not in t.message, t.message


def test_grader_frames_and_package_paths_are_cut_from_an_error_message():
    from autograder.judge.torch_errors import clean_message, meaning

    raw = (
        "Data-dependent branching\n\nfrom user code:\n"
        '   File "<probes compile>", line 12, in run\n    out = model(x)\n'
        '  File "<cell 3>", line 5, in forward\n    if x.sum() > 0:\n'
        "  at /usr/lib/python3/dist-packages/torch/_dynamo/symbolic_convert.py:99\n"
        '   File "/opt/venv/lib/python3.13/site-packages/autograder/sandbox/runtime.py", line 3, in call\n'
        "    return f()\n"
    )
    text = clean_message(raw)
    assert "<probes" not in text and "out = model(x)" not in text and "return f()" not in text, text
    assert '"<cell 3>", line 5, in forward' in text and "if x.sum() > 0:" in text, text
    assert "torch/_dynamo/symbolic_convert.py" in text and "packages" not in text, text
    assert meaning("Something no one has seen") == ""
    assert "dtype" in meaning("expected scalar type Double but found Float")


def test_the_judges_own_work_counts_against_a_tests_time_and_ends_as_a_timeout(tmp_path):
    """Issue 22: judge-side work (a suite's diagnosis over a huge reply) ran 52.5 s against a 10 s limit and
    ended "failed". Past its deadline a test is a timeout, and the watchdog stops judge-side Python work."""
    import time

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    with open(course / "solutions/demo/counter/test_hidden.py", "a") as f:
        f.write(
            "\n\n@pytest.mark.points(1)\n@pytest.mark.timeout(1)\ndef test_slow_judge_then_fail(student):\n"
            '    """The judge works slowly after the call, then fails"""\n'
            "    import time\n    student.Counter(1)\n    time.sleep(1.5)\n"
            '    check(False, "a diagnosis that came too late")\n'
            "\n\n@pytest.mark.points(1)\n@pytest.mark.timeout(1)\ndef test_endless_judge(student):\n"
            '    """The judge never stops working"""\n'
            "    student.Counter(1)\n    while True:\n        pass\n"
        )
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    started = time.monotonic()
    r = grade(load_assignment("demo", course), [sub])[0]
    t = by_name(r)
    slow, endless = t["The judge works slowly after the call, then fails"], t["The judge never stops working"]
    assert slow.status == "timeout" and "time limit (1 s)" in slow.message, slow
    assert endless.status == "timeout" and endless.seconds < 60, endless  # 3 s of the judge's CPU time
    assert r.total == r.max_total - 2  # every other test unaffected
    assert time.monotonic() - started < 60
    # and the watchdog is left disarmed: a second SIGPROF in the overrun test's teardown once left it armed
    # (CLOCK_RUNNING stuck True), so unrelated work later in this process was interrupted
    from autograder.judge import proxy

    assert proxy.CLOCK_RUNNING == [False]
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_the_judges_watchdog_interrupts_only_a_running_test():
    """A SIGPROF outside a suite's test (a timer re-armed by a restart between tests, or a process that graded
    in-process and went on) interrupts nothing; inside one it is the test's overtime."""
    import signal

    import pytest

    from autograder.judge import proxy

    assert proxy.CLOCK_RUNNING == [False]
    proxy._overtime(signal.SIGPROF, None)  # nothing raised: no test is running
    proxy.CLOCK_RUNNING[0] = True
    try:
        with pytest.raises(proxy.JudgeOvertime):
            proxy._overtime(signal.SIGPROF, None)
    finally:
        proxy.CLOCK_RUNNING[0] = False
