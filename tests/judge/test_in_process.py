"""A point is awarded only for a fact the judge can verify (issue 43), and the threat model says which.

A hidden test marked ``@pytest.mark.in_process`` is advice on a fact only the student's process reports
(which function ran, on which batch, what flags an object carries): it is worth 0 points. A test marked
``@pytest.mark.outside("how")`` rests on a measurement made outside the student's process (the sandbox's
cgroup peak memory). docs/threat-model.md lists both, row by row, and these tests hold the list to the suites.
"""

from __future__ import annotations

import ast
import re

from tests.helpers import ROOT

SUITES = sorted(ROOT.glob("solutions/*/*/test_hidden.py"))
THREAT_MODEL = ROOT / "docs" / "threat-model.md"


def _mark(dec: ast.expr, name: str) -> ast.expr | None:
    node = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(node, ast.Attribute) and node.attr == name:
        return dec
    return None


def _tests(suite):
    return [fn for fn in ast.parse(suite.read_text()).body
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")]


def marked_tests() -> dict[tuple[str, str], tuple[float, str]]:
    """(exercise, test) -> (points, "advice" | "outside: how") for every test marked in_process or outside."""
    out = {}
    for suite in SUITES:
        for fn in _tests(suite):
            points = next((d for d in fn.decorator_list if _mark(d, "points")), None)
            value = float(ast.literal_eval(points.args[0])) if isinstance(points, ast.Call) else None
            if any(_mark(d, "in_process") for d in fn.decorator_list):
                out[(suite.parent.name, fn.name)] = (value, "advice")
            outside = next((d for d in fn.decorator_list if _mark(d, "outside")), None)
            if outside is not None:
                assert isinstance(outside, ast.Call) and outside.args, (fn.name, "outside needs its how")
                out[(suite.parent.name, fn.name)] = (value, "outside: " + ast.literal_eval(outside.args[0]))
    return out


def doc_rows() -> dict[tuple[str, str], tuple[float, str]]:
    text = THREAT_MODEL.read_text()
    block = re.search(r"<!-- graded facts:[^>]*-->\n(.*?)<!-- end of graded facts -->", text, re.S)
    assert block, "docs/threat-model.md has lost its table of graded facts"
    rows = {}
    for line in block.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        ex, test, points, _fact, how = cells
        rows[(ex.strip("`"), test.strip("`"))] = (float(points), how.split(":")[0] if how.startswith("advice")
                                                  else how)
    return rows


def test_every_advice_test_is_worth_zero_points():
    found = marked_tests()
    assert any(how == "advice" for _, how in found.values()), "no test is marked in_process"
    paid = {k: p for k, (p, how) in found.items() if how == "advice" and p != 0}
    assert not paid, f"advice on a fact only the student's process reports must be worth 0 points: {paid}"


def test_the_threat_model_lists_exactly_the_marked_tests():
    code, doc = marked_tests(), doc_rows()
    assert set(doc) == set(code), {"in the suites, not the doc": sorted(set(code) - set(doc)),
                                   "in the doc, not the suites": sorted(set(doc) - set(code))}
    for key, (points, how) in code.items():
        assert doc[key] == (points, how), (key, "suite says", (points, how), "doc says", doc[key])


def test_a_peak_memory_measurement_is_declared_outside():
    """A test that asks the judge for the sandbox's peak memory says so (and so appears in the threat model)."""
    marked = marked_tests()
    for suite in SUITES:
        for fn in _tests(suite):
            calls = {n.func.attr for n in ast.walk(fn) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute)}
            if "peak_memory" in calls:
                assert marked.get((suite.parent.name, fn.name), (0, ""))[1].startswith("outside: cgroup"), fn.name


# The inventory (issue 43): what a suite's probes report about the student's process rather than values the
# judge recomputes. A test that reads one of these (a subscript or .get of the probe's reply, in the test's own
# body) decides on a fact only the sandbox asserts, so it must be advice. A helper may read them for a review
# flag only.
SANDBOX_FACTS = {
    "accumulation": {"forward_inputs", "tampered"},  # the dispatch mode's record of the first layer's inputs
    "amp_loop": {"log"},  # the probe's hooks: .grad None before accumulation, autocast on in forward/backward
    "checkpointing": {"alive_at_call"},  # weak references to each batch's tag node
    "compile": {"graphs", "ops", "runs", "traces", "recompiled_at"},  # the probe's backend / comptime
    "custom_autograd": {"node", "input_requires_grad"},  # a graph node's type, the caller's flag
    "lost_gradients": {"is_leaf", "grad_fn", "from_autograd", "exact_type"},  # flags and the origin marker
    "mlp_backward": {"custom_function", "own_custom_node", "nodes"},  # the loss graph's shape
    "rank_zero_checkpoint": {"exists", "digest"},  # what each rank saw right after returning
}


def _reads(fn: ast.AST) -> set[str]:
    keys = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
            keys.add(n.slice.value)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            keys.add(n.args[0].value)
    return keys


def test_every_test_reading_a_sandbox_reported_fact_is_advice():
    advice = {k for k, (_, how) in marked_tests().items() if how == "advice"}
    for ex, facts in SANDBOX_FACTS.items():
        [suite] = [s for s in SUITES if s.parent.name == ex]
        assert _reads(ast.parse(suite.read_text())) & facts, (ex, "the suite reads none of these: update SANDBOX_FACTS")
        reading = {fn.name for fn in _tests(suite) if _reads(fn) & facts}
        assert {(ex, name) for name in reading} <= advice, (ex, sorted(n for n in reading if (ex, n) not in advice))
