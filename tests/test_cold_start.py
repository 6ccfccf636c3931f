"""What makes grading fast from cold, held as behaviour (timings live in benchmarks/, never here).

- the ``torchgrader`` process never imports torch, pytest or numpy: it only
  starts workers and writes reports;
- one submission's class report draws no charts (no matplotlib);
- the sandbox server imports torch._dynamo before its first sandbox only when
  asked (the selected exercises compile or train), and what only some
  sandboxes use (torch._dynamo for optimizers, scikit-learn, a compiler
  warm-up) only when the judge asks, as a second submission arrives: one
  submission never waits for it, every later sandbox inherits it;
- whether to ask is what the selected exercises declare (``warm_dynamo`` in exercise.toml).
"""

from __future__ import annotations

import re
import subprocess
import sys

from autograder.assignment import load_assignment
from autograder.grade import grade
from autograder.sandbox.client import Sandbox, SandboxConfig, SandboxServer
from autograder.warmup import warm_dynamo
from tests.helpers import DEMO_COURSE, ROOT, preloaded

REF = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)
HEAVY = ("torch", "pytest", "numpy", "matplotlib")


def imported(stderr: str) -> set[str]:
    """Top-level names of the modules a ``python -X importtime`` run imported."""
    return {m.group(1).strip().split(".")[0] for m in re.finditer(r"^import time:.*\|\s*(\S+)\s*$", stderr, re.M)}


def test_the_grade_command_never_imports_torch_and_one_submission_draws_no_charts(tmp_path):
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    out = tmp_path / "out"
    run = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "autograder.cli",
            "grade",
            str(sub),
            "--assignment",
            "demo",
            "--course",
            str(DEMO_COURSE),
            "--out",
            str(out),
            "--progress",
            "plain",
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    mods = imported(run.stderr)
    assert "autograder" in mods and "sqlite3" in mods  # the measurement sees this process's imports
    assert not mods & set(HEAVY), f"the CLI process imported {sorted(mods & set(HEAVY))}"
    assert "alice: 6 / 6 points" in run.stdout  # graded for real, by a worker process
    page = (out / "report.html").read_text()
    assert "data:image/png" not in page and "Charts are drawn for a class" in page
    assert "alice: 6 / 6" in page  # the one score, in words instead of a histogram


def test_every_staff_command_still_parses_and_grade_parses_without_them():
    from autograder.cli import COMMANDS, build_parser

    everything = build_parser()  # --help: every command with its arguments
    for c in COMMANDS:
        sub = everything._subparsers._group_actions[0].choices[c.name]
        assert sub._actions[1:], f"{c.name} has no arguments"
    code = (
        "import sys\nfrom autograder.cli import build_parser\n"
        "a = build_parser('grade').parse_args(['grade', 'x.py', '--assignment', 'a', '--out', 'o'])\n"
        "print(a.command, sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{HEAVY!r} or m.startswith('autograder.authoring')))"
    )
    check = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert check.stdout.strip() == "grade []", check.stdout + check.stderr


def test_reading_a_notebook_skips_jsonschemas_format_grammars():
    """nbformat validates without format checkers; jsonschema's IRI grammars (Lark) cost a second per judge."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom autograder.load import load\n"
        "sub = load(Path('samples/alice.ipynb'))\n"
        "print(len(sub.cells) > 5, 'lark' in sys.modules, 'rfc3987_syntax' in sys.modules)\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('rfc3987_syntax'):\n    import rfc3987_syntax  # still importable afterwards\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.stdout.split() == ["True", "False", "False"], run.stdout + run.stderr


def test_the_server_imports_dynamo_first_only_when_asked_and_the_rest_when_the_judge_asks():
    """The first sandbox waits only for what every sandbox needs (torch._dynamo too when the selected exercises
    compile or train); torch._dynamo (for optimizers) and scikit-learn (for students' own cells) come when the
    judge asks, for every later sandbox (never by themselves: one submission must not wait for them)."""
    cold = SandboxServer(warm_compiler=False)
    warm = SandboxServer(warm_compiler=True)
    try:
        for server, expected in (
            (cold, [(False, False), (False, False), (True, True)]),
            (warm, [(True, False), (True, False), (True, True)]),
        ):
            seen = []
            for n in range(len(expected)):
                if n == 2:
                    server.warm_later()
                sb = Sandbox(server, SandboxConfig())
                try:
                    seen.append(preloaded(sb))
                finally:
                    sb.kill()
            assert seen == expected
    finally:
        cold.close()
        warm.close()


def test_grade_asks_its_server_to_warm_up_after_the_first_of_several_submissions_only(tmp_path):
    """Also when the submissions come one at a time (a batch worker's queue): a worker given one submission
    used to ask anyway, and its server spent seconds of CPU on imports no sandbox would use."""
    a = load_assignment("demo", DEMO_COURSE)
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    cases = (([sub], 1, False), ([sub, sub], 2, True), (iter([sub]), 1, False), (iter([sub] * 2), 2, True))
    for paths, n, warmed in cases:
        with SandboxServer(warm_compiler=False) as server:
            assert [r.total for r in grade(a, paths, server=server)] == [6.0] * n
            sb = Sandbox(server, SandboxConfig())
            try:
                assert preloaded(sb) == (warmed, warmed)
            finally:
                sb.kill()


def test_the_compiler_is_wanted_only_for_exercises_that_declare_it():
    a = load_assignment("pytorch-fundamentals", ROOT)
    declared = sorted(e.id for e in a.exercises if e.warm_dynamo)
    assert declared == ["amp_loop", "checkpointing", "compile"]  # they compile, or their probes train (torch.optim)
    assert warm_dynamo(a)  # the whole assignment has `compile`
    assert warm_dynamo(a, ["compile"]) and warm_dynamo(a, ["checkpointing"])
    assert not warm_dynamo(a, ["views", "softmax_grad"])
    assert not warm_dynamo(load_assignment("demo", DEMO_COURSE))


def test_the_declared_key_drives_the_warm_up_not_the_suites_text(tmp_path):
    """A suite that says torch.compile without declaring `warm_dynamo` warms nothing; a declaration warms."""
    import shutil

    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course, ignore=shutil.ignore_patterns("__pycache__"))
    suite = course / "solutions/demo/basics/test_hidden.py"
    suite.write_text(suite.read_text() + "\n# torch.compile torch._dynamo torch.optim\n")
    assert not warm_dynamo(load_assignment("demo", course), ["basics"])
    toml = course / "assignments/demo/counter/exercise.toml"
    toml.write_text(toml.read_text() + "warm_dynamo = true\n")
    a = load_assignment("demo", course)
    assert (warm_dynamo(a, ["basics"]), warm_dynamo(a, ["counter"]), warm_dynamo(a)) == (False, True, True)


def test_grade_starts_its_sandbox_server_before_it_imports_torch(tmp_path):
    """`torchgrader check` grades in its own process: its server must import torch beside it, not after it."""
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from autograder.sandbox import client\n"
        "seen = []\ninit = client.SandboxServer.__init__\n"
        "def spy(self, **kw):\n    seen.append('torch' in sys.modules)\n    init(self, **kw)\n"
        "client.SandboxServer.__init__ = spy\n"
        "from autograder.assignment import load_assignment\nfrom autograder.grade import grade\n"
        f"a = load_assignment('demo', Path({str(DEMO_COURSE)!r}))\n"
        f"r = grade(a, [Path({str(sub)!r})])[0]\n"
        "print(seen, r.total, r.max_total)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.stdout.split() == ["[False]", "6.0", "6.0"], run.stdout + run.stderr[-3000:]


def test_the_judge_imports_torch_dynamo_ahead_only_for_exercises_that_declare_it():
    """torch.optim imports torch._dynamo at an optimizer's first use: the judge imports it before collection instead."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from autograder.assignment import load_assignment\n"
        "from autograder.grade import GradeOptions\nfrom autograder.warmup import import_judge_dynamo\n"
        f"a = load_assignment('pytorch-fundamentals', Path({str(ROOT)!r}))\n"
        "seen = ['torch._dynamo' in sys.modules]\n"
        "for ex in ('softmax_grad', 'checkpointing'):\n"
        "    import_judge_dynamo(a, GradeOptions(exercises=[ex]))\n"
        "    seen.append('torch._dynamo' in sys.modules)\n"
        "print(seen)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.stdout.split() == ["[False,", "False,", "True]"], run.stdout + run.stderr[-3000:]


def test_a_notebook_kernel_warms_its_server_only_with_what_its_later_checks_would_import():
    from autograder.checker import later_imports

    a = load_assignment("pytorch-fundamentals", ROOT)
    alice = ROOT / "samples" / "alice.ipynb"
    assert later_imports(a, "softmax_grad", None, alice) == []  # back-to-back checks wait for nothing
    assert later_imports(a, "checkpointing", None, alice) == ["torch._dynamo"]
    history = ["", "from sklearn.datasets import load_digits\nX = load_digits().data"]
    assert later_imports(a, "views", history, None) == ["sklearn.datasets"]
    with SandboxServer(warm_compiler=False) as server:
        server.warm_later(["sklearn.datasets"])
        sb = Sandbox(server, SandboxConfig())
        try:
            assert preloaded(sb) == (False, True)
        finally:
            sb.kill()


def test_the_judge_grades_with_the_collector_on_after_importing_with_it_paused(server, tmp_path):
    """Workers and `check` import torch and the suites with the garbage collector paused (autograder.gcpause);
    grading must not run that way (a large submission's garbage would pile up in the judge), and a process that
    never paused it (a notebook kernel) keeps its own setting."""
    import gc

    from autograder import gcpause

    a = load_assignment("demo", DEMO_COURSE)
    sub = tmp_path / "alice.py"
    sub.write_text(REF)
    seen = []

    def during(result):
        seen.append(gc.isenabled())

    gcpause.pause()
    try:
        assert not gc.isenabled()
        grade(a, [sub], server=server, on_result=during)
    finally:
        gcpause.resume()
    assert seen == [True] and gc.isenabled()
    gc.disable()  # a caller's own choice is not undone
    try:
        grade(a, [sub], server=server, on_result=during)
        assert seen == [True, False] and not gc.isenabled()
    finally:
        gc.enable()
