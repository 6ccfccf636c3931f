"""One submission over two judges (``judge/spread.py``, issue 25): a lone submission uses the idle core.

What must hold: the grade is the one a single judge gives (every test's status, points and message, the
cells, the output), the later exercises really run in a sandbox of their own, the cut is the same every
time, and a copy that fails costs nothing: its half is graded by the judge itself.
"""

from __future__ import annotations

import os
import re

import pytest

from autograder.grade import GradeOptions, grade
from autograder.judge import plugin as plugin_module
from autograder.judge.spread import halves, merge_cells, merge_output
from autograder.results import CellResult
from autograder.session import Budget
from tests.helpers import DEMO_COURSE, children_of

BASICS = (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
COUNTER = (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
# Each process that replays the cells draws its own token; each exercise's functions print it.
TOKENS = (
    "import uuid\nTOKEN = uuid.uuid4().hex\nprint('cells ran')\n"
    "# %%\n" + BASICS.replace("def double(x):\n", "def double(x):\n    print('double in', TOKEN)\n")
    + "\n# %%\n" + COUNTER.replace("    def add(self, n):\n", "    def add(self, n):\n        print('add in', TOKEN)\n")
)
SUBMISSIONS = {
    "ref": BASICS + "\n# %%\n" + COUNTER,
    "tokens": TOKENS,
    "half_wrong": BASICS.replace("x * 2", "x * x") + "\n# %%\n" + COUNTER,
    "broken_cell": "def double(x)\n    return x\n# %%\n" + COUNTER,
    "stub": "\n# %%\n".join(p.read_text() for p in sorted((DEMO_COURSE / "assignments/demo").glob("*/stub.py"))),
}


def _grade(server, demo, tmp_path, spread: int, names=tuple(SUBMISSIONS)):
    folder = tmp_path / f"spread{spread}"
    folder.mkdir()
    paths = []
    for name in names:
        p = folder / f"{name}.py"
        p.write_text(SUBMISSIONS[name])
        paths.append(p)
    opts = GradeOptions(budget=Budget(cell_seconds=5, submission_seconds=60))
    judges = (lambda path: spread) if spread > 1 else None
    return {r.submission: r for r in grade(demo, paths, options=opts, server=server, spread=judges)}


def _verdicts(r):
    return [(t.nodeid, t.status, t.points, t.max_points, t.message, t.cause) for e in r.exercises for t in e.tests]


def _shape(protections: dict[str, str]) -> dict[str, str]:
    return {k: re.sub(r"\d+", "N", v) for k, v in protections.items()}  # each sandbox has a uid of its own


def _cells(r):
    return [(c.index, c.status, c.message, c.label) for c in r.cells]


def test_two_judges_give_the_grade_one_judge_gives(server, demo, tmp_path):
    one = _grade(server, demo, tmp_path, spread=1)
    two = _grade(server, demo, tmp_path, spread=2)
    assert one["ref"].total == one["ref"].max_total == 6
    assert one["half_wrong"].total < 6 and one["stub"].total == 0
    for name in SUBMISSIONS:
        assert _verdicts(two[name]) == _verdicts(one[name]), name
        assert _cells(two[name]) == _cells(one[name]), name
        assert _shape(two[name].protections) == _shape(one[name].protections), name
    assert "cells ran" in two["tokens"].output


def test_the_later_exercises_run_in_a_sandbox_of_their_own(server, demo, tmp_path):
    """basics and counter each get a sandbox: their functions print two tokens, and both prints are kept."""
    one = _grade(server, demo, tmp_path, spread=1, names=("tokens",))["tokens"].output
    two = _grade(server, demo, tmp_path, spread=2, names=("tokens",))["tokens"].output
    assert len(set(re.findall(r"in ([0-9a-f]{32})", one))) == 1, one
    double = set(re.findall(r"double in ([0-9a-f]{32})", two))
    add = set(re.findall(r"add in ([0-9a-f]{32})", two))
    assert len(double) == len(add) == 1 and double != add, two
    assert two.count("cells ran") == 1, two  # what both sandboxes printed alike is said once


def test_a_copy_that_dies_costs_nothing(server, demo, tmp_path, monkeypatch, capfd):
    """The copy's half is graded by the judge when the copy dies (here at its first test); the log says so."""
    judge = os.getpid()
    real = plugin_module.GradingPlugin._run_item

    def dies_in_the_copy(self, item):
        if os.getpid() != judge:
            os._exit(9)
        return real(self, item)

    monkeypatch.setattr(plugin_module.GradingPlugin, "_run_item", dies_in_the_copy)
    two = _grade(server, demo, tmp_path, spread=2, names=("ref", "half_wrong"))
    monkeypatch.undo()
    one = _grade(server, demo, tmp_path, spread=1, names=("ref", "half_wrong"))
    for name in ("ref", "half_wrong"):
        assert _verdicts(two[name]) == _verdicts(one[name]), name
    assert capfd.readouterr().err.count("the judge's copy failed, so the judge graded its half itself") == 2


def test_halves_cut_where_the_weights_come_closest_to_half():
    items = [("a", 1), ("a", 2), ("b", 1), ("c", 1), ("c", 2), ("d", 1)]
    weights = {"a": 10, "b": 10, "c": 60, "d": 30}
    first, second = halves(items, weight=lambda i: weights[i[0]], exercise=lambda i: i[0])
    assert first == [("a", 1), ("a", 2), ("b", 1), ("c", 1), ("c", 2)] and second == [("d", 1)]
    # an exercise's weight counts once, however many tests it has; the order is kept
    weights = {"a": 40, "b": 10, "c": 10, "d": 40}
    first, second = halves(items, weight=lambda i: weights[i[0]], exercise=lambda i: i[0])
    assert [i[0] for i in first] == ["a", "a", "b"] and [i[0] for i in second] == ["c", "c", "d"]
    assert halves(items[:2], weight=lambda i: 1, exercise=lambda i: i[0]) == ([], items[:2])


def test_halves_of_the_course_follow_the_exercises_time_limits():
    """The same assignment is always cut at the same place: the staff's time limits decide, nothing measured."""
    from autograder.assignment import load_assignment
    from tests.helpers import ROOT

    a = load_assignment("pytorch-fundamentals", ROOT)
    items = [(ex.id, ex.timeout) for ex in a.exercises]
    first, second = halves(items, weight=lambda i: i[1], exercise=lambda i: i[0])
    total = sum(t for _, t in items)
    assert first and second and first + second == items
    assert abs(sum(t for _, t in first) - total / 2) <= max(t for _, t in items) / 2


def test_merged_cells_and_output_say_each_thing_once():
    mine = [CellResult(1, "ok"), CellResult(2, "error", "NameError")]
    theirs = [CellResult(2, "ok"), CellResult(3, "timeout")]
    assert [(c.index, c.status) for c in merge_cells(mine, theirs)] == [(1, "ok"), (2, "error"), (3, "timeout")]
    assert merge_output("cells\nA\n", "cells\nB\n") == "cells\nA\nB\n"
    assert merge_output("same", "same") == "same"


def test_a_sandbox_that_cannot_start_stops_both_judges_before_any_grade(server, demo, tmp_path, monkeypatch):
    """The copy's refused sandbox hands its half to the judge, whose own refusal stops the run: no result."""
    from autograder.errors import SandboxCannotStart
    from autograder.sandbox import isolation

    monkeypatch.setenv(isolation.TEST_REFUSE, "/proc")
    sub = tmp_path / "ref.py"
    sub.write_text(SUBMISSIONS["ref"])
    got: list = []
    before = set(children_of(os.getpid()))
    with pytest.raises(SandboxCannotStart):
        grade(demo, [sub], on_result=got.append, spread=lambda path: 2)
    assert got == []
    assert set(children_of(os.getpid())) <= before  # the copy is gone, not left behind



def test_a_function_that_leaves_torch_modes_changed_costs_the_same_with_one_judge_or_two(server, tmp_path):
    """The class of fault where a grade depended on which exercises shared a sandbox: a function that leaves
    gradient recording off and the default dtype changed (each test now starts from the modes the cells
    left), graded with one judge and with two, gives the same verdicts, and costs no later exercise."""
    import json

    from autograder.assignment import load_assignment
    from tests.helpers import ROOT

    nb = json.loads((ROOT / "samples" / "alice.ipynb").read_text())
    leaked = 0
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "def shares_storage(a, b):\n" in src:
            cell["source"] = src.replace("def shares_storage(a, b):\n", "def shares_storage(a, b):\n"
                                         "    torch.set_grad_enabled(False)\n"
                                         "    torch.set_default_dtype(torch.float64)\n", 1)
            leaked += 1
    assert leaked == 1
    path = tmp_path / "leaky.ipynb"
    path.write_text(json.dumps(nb))
    course = load_assignment("pytorch-fundamentals", ROOT)
    opts = GradeOptions(budget=Budget(cell_seconds=30, submission_seconds=300))
    [one] = grade(course, [path], options=opts, server=server)
    [two] = grade(course, [path], options=opts, server=server, spread=lambda p: 2)
    assert [v[:3] for v in _verdicts(two)] == [v[:3] for v in _verdicts(one)]
    # the contract's convention (global settings left as found) costs the leaky function its own exercise's
    # conventions test, and nothing else: no later exercise pays for the modes it left
    failed = [(e.id, t.name) for e in one.exercises for t in e.tests if t.status != "passed"]
    assert failed and all(ex == "views" and name.startswith("Every function leaves its inputs")
                          for ex, name in failed), failed
    assert all(e.points == e.max_points for e in one.exercises if e.id != "views")
