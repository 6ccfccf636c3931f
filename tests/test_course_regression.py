"""The pytorch-fundamentals regression test: `torchgrader validate` passes on it and fails on a weakened copy."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from autograder.authoring.lint import find_tests, points_mark
from autograder.authoring.validate import default_jobs, validate
from tests.helpers import ROOT

ASSIGNMENT = "pytorch-fundamentals"
# exercises whose suites grade in about a second (no torch.compile, no training runs)
LIGHT = ("views", "softmax_grad", "param_counts", "custom_autograd", "accumulation", "lost_gradients",
         "mlp_backward", "noisy_digits")


def _validate(course: Path, **kw) -> tuple[int, str]:
    lines: list[str] = []
    code = validate(ASSIGNMENT, course, out=lines.append, **kw)
    return code, "\n".join(lines)


def _lone_catch(table: str) -> tuple[str, str, list[str]]:
    """A mutant of a light exercise and the (at most three) hidden tests that alone catch it, by their names."""
    section = None
    found: list[tuple[int, str, str, list[str]]] = []
    for line in table.splitlines():
        m = re.match(r"^(\w+) — ", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^  ok +mutant (\w+) +(?:exact|generic) +caught \([^)]*\) by (\d) test\(s\): (.*)$", line)
        if m and section in LIGHT and not m.group(3).endswith("..."):
            names = re.split(r"; (?:no effect on|diagnosed as) ", m.group(3))[0].split("; ")
            found.append((int(m.group(2)), section, m.group(1), names))
    assert found, "no mutant of a light exercise is caught by three tests or fewer"
    _, exercise, mutant, names = min(found)
    return exercise, mutant, names


def _remove_tests(hidden: Path, toml: Path, names: list[str]) -> list[str]:
    """Delete the tests whose docstring's first line is one of ``names``; lower the declared points to match."""
    src = hidden.read_text()
    lines = src.splitlines(keepends=True)
    removed, points = [], 0.0
    for fn, outer in sorted(find_tests(ast.parse(src)), key=lambda t: -t[0].lineno):
        doc = (ast.get_docstring(fn) or "").strip().splitlines()
        if doc and doc[0].strip() in names:
            start = min([d.lineno for d in fn.decorator_list] + [fn.lineno]) - 1
            del lines[start:fn.end_lineno]
            removed.append(fn.name)
            points += points_mark(fn, outer)[1] or 0.0
    hidden.write_text("".join(lines))
    declared = float(re.search(r"^points\s*=\s*([\d.]+)", toml.read_text(), re.M).group(1))
    toml.write_text(re.sub(r"^points\s*=\s*[\d.]+", f"points = {declared - points:g}", toml.read_text(),
                           flags=re.M))
    return removed


@pytest.mark.slow
def test_validate_passes_on_the_assignment_and_names_the_culprit_in_a_weakened_copy(tmp_path: Path):
    # --quick: each case graded on its own exercise and the suites it can reach. --full (every case on every
    # suite, torch.compile's included) is a staff run of minutes; the engine's --full path is tested on the
    # demo course (tests/authoring/test_validate.py).
    code, out = _validate(ROOT, jobs=default_jobs(), full=False)
    assert code == 0, out
    assert re.search(r"\d+ checks: \d+ ok, 0 failing", out)

    # Weaken a copy: remove the hidden test(s) that alone catch one mutant. validate must now fail and
    # name that mutant as a survivor (and the tests that still call what it changes, if any).
    exercise, mutant, names = _lone_catch(out)
    course = tmp_path / "course"
    for side in ("assignments", "solutions"):
        shutil.copytree(ROOT / side / ASSIGNMENT, course / side / ASSIGNMENT,
                        ignore=shutil.ignore_patterns("__pycache__"))
    removed = _remove_tests(course / "solutions" / ASSIGNMENT / exercise / "test_hidden.py",
                            course / "assignments" / ASSIGNMENT / exercise / "exercise.toml", names)
    assert len(removed) == len(names), (names, removed)
    code, out = _validate(course, exercises=[exercise], jobs=default_jobs())
    assert code == 1, out
    assert re.search(rf"^  FAIL {exercise}: mutant {mutant}: SURVIVED: mutant {mutant}\.py earned full marks .* on "
                     rf"{exercise}; misconception: .+", out, re.M), out
    assert not re.search(r"^  FAIL \w+: (reference|stub|alternative|public)", out, re.M), out


def _torch_manual_seed_calls(path: Path) -> list[int]:
    """Lines calling torch's global manual_seed, by any spelling: ``torch.manual_seed``, through an alias of
    torch or ``torch.random``, or imported by name from either (a Generator's own manual_seed is not it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    torch_names = {"torch"} | {a.asname for n in imports if isinstance(n, ast.Import) for a in n.names
                               if a.name == "torch" and a.asname}
    seed_names = {a.asname or a.name for n in imports if isinstance(n, ast.ImportFrom)
                  and n.module in ("torch", "torch.random") for a in n.names if a.name == "manual_seed"}

    def is_torch(e: ast.expr) -> bool:
        return (isinstance(e, ast.Name) and e.id in torch_names) or (
            isinstance(e, ast.Attribute) and e.attr == "random" and is_torch(e.value))

    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Attribute) and n.func.attr == "manual_seed" and is_torch(n.func.value))
        or (isinstance(n.func, ast.Name) and n.func.id in seed_names))]


def test_the_hidden_suites_seed_without_torch_manual_seed():
    """A judge-side torch.manual_seed formats a stack trace for each absent accelerator (CUDA, XPU, MTIA):
    accumulation's hidden suite made 35 such calls per submission. Hidden suites seed through
    autograder.judge.manual_seed, which seeds the same generators (tests/sandbox/test_seeding.py). Public tests,
    which students read and run a few times, keep torch.manual_seed."""
    suites = sorted((ROOT / "solutions").glob("*/*/test_*.py"))
    assert len(suites) >= 16, suites
    found = {str(p.relative_to(ROOT)): lines for p in suites if (lines := _torch_manual_seed_calls(p))}
    assert found == {}, f"use manual_seed from autograder.judge instead of torch.manual_seed: {found}"
