"""Points that rest on a fact measured inside the student's process stay small, and the README lists them.

A hidden test marked ``@pytest.mark.in_process`` awards points on something
only the sandbox can see (which function ran, on which batch, whether a graph
is alive); student code can rewrite that measurement, so all such tests of an
exercise together are worth at most 1 point (issue 22), and the threat model
says which tests they are.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import ROOT

SUITES = sorted(ROOT.glob("solutions/*/*/test_hidden.py"))
CAP = 1.0


def _mark(dec: ast.expr, name: str) -> ast.expr | None:
    node = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(node, ast.Attribute) and node.attr == name:
        return dec
    return None


def in_process_tests() -> dict[str, dict[str, float]]:
    """exercise -> {test function: points} for every test marked in_process."""
    out: dict[str, dict[str, float]] = {}
    for suite in SUITES:
        tree = ast.parse(suite.read_text())
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            if not any(_mark(d, "in_process") for d in fn.decorator_list):
                continue
            points = next(d for d in fn.decorator_list if _mark(d, "points"))
            assert isinstance(points, ast.Call)
            out.setdefault(suite.parent.name, {})[fn.name] = float(ast.literal_eval(points.args[0]))
    return out


def _readme_list() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- in-process tests:[^>]*-->\n(.*?)<!-- end of in-process tests -->", text, re.S)
    assert block, "the README's threat model has lost its list of in-process tests"
    return [ln.strip() for ln in block.group(1).splitlines() if ln.strip()]


def readme_lines() -> list[str]:
    return [f"- `{ex}`: `{name}` ({pts:g} point{'s' if pts != 1 else ''})"
            for ex, tests in sorted(in_process_tests().items()) for name, pts in sorted(tests.items())]


def test_in_process_points_are_at_most_one_per_exercise():
    found = in_process_tests()
    assert found, "no test is marked in_process: the measured-in-process facts must be marked"
    for ex, tests in found.items():
        assert sum(tests.values()) <= CAP, (ex, tests)


def test_the_readme_lists_exactly_the_in_process_tests():
    assert _readme_list() == readme_lines(), "\n".join(readme_lines())


def test_every_in_process_test_is_a_hidden_test_with_points():
    for ex, tests in in_process_tests().items():
        assert all(p > 0 for p in tests.values()), (ex, tests)
    assert all(isinstance(p, Path) for p in SUITES)


# What a suite's probes measure about the student's process (not values the judge recomputes): a test that reads
# one of these awards points on a fact only the sandbox asserts, so it must be in_process (issue 22).
SANDBOX_FACTS = {
    "compile": {"graphs", "ops", "runs", "traces", "recompiled_at"},  # counted by the probe's backend / comptime
    "amp_loop": {"log"},  # the probe's hooks: .grad None before accumulation, autocast on in forward/backward
}


def _reads(fn: ast.FunctionDef) -> set[str]:
    return {n.slice.value for n in ast.walk(fn) if isinstance(n, ast.Subscript)
            and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)}


def test_every_test_reading_a_sandbox_measured_fact_is_in_process():
    marked = in_process_tests()
    for ex, facts in SANDBOX_FACTS.items():
        [suite] = [s for s in SUITES if s.parent.name == ex]
        tests = [fn for fn in ast.parse(suite.read_text()).body
                 if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")]
        reading = {fn.name for fn in tests if _reads(fn) & facts}
        assert reading, (ex, "no test reads the facts listed: update SANDBOX_FACTS")
        assert reading <= set(marked.get(ex, {})), (ex, sorted(reading - set(marked.get(ex, {}))))
