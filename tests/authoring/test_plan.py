"""validate's planning: a swapped-in file is graded on the other suites it can reach, and only on those."""

from __future__ import annotations

from pathlib import Path

from autograder.assignment import load_assignment
from autograder.authoring.cases import Case
from autograder.authoring.plan import plan, reach
from tests.helpers import DEMO_COURSE


def _case(tmp_path: Path, name: str, source: str) -> Case:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return Case(name=name, kind="mutant", exercise="basics", source=path)


def test_a_file_reaches_the_suites_that_use_its_names_or_feel_its_global_effects(tmp_path: Path):
    a = load_assignment("demo", DEMO_COURSE)
    confined = _case(tmp_path, "confined", "def double(x):\n    return x + x\n")
    shadows = _case(tmp_path, "shadows", "def double(x):\n    return x + x\n\n\nclass Counter:\n    pass\n")
    effect = _case(tmp_path, "effect", "import torch\ntorch.set_default_dtype(torch.float64)\n\n\ndef double(x):\n"
                                       "    return x * 2\n")
    assert reach(a, "basics", confined.source) == ([], "")
    others, why = reach(a, "basics", shadows.source)
    assert others == ["counter"] and "`Counter`" in why
    others, why = reach(a, "basics", effect.source)
    assert others == ["counter"] and "set_default_dtype" in why
    quick = plan(a, [confined, shadows, effect], ["basics", "counter"], full=False)
    assert quick == {"confined": (["basics"], ""), "shadows": (["basics", "counter"], reach(a, "basics",
                                                                                             shadows.source)[1]),
                     "effect": (["basics", "counter"], reach(a, "basics", effect.source)[1])}
    assert plan(a, [confined], ["basics", "counter"], full=True) == {"confined": (["basics", "counter"], "")}


def test_planning_reads_each_suite_once_and_sees_an_edited_suite(tmp_path: Path, monkeypatch):
    # validate plans some 260 cases of eleven exercises: re-parsing every other suite per case took 40 s of
    # the judge's time before the first case was graded. A suite edited between two runs must still count.
    import ast

    import autograder.authoring.plan as planning

    a = load_assignment("demo", DEMO_COURSE)
    parsed: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(planning.ast, "parse", lambda src, *args, **kw: parsed.append(src) or real_parse(src))
    planning._names_used.cache_clear()  # a memo from an earlier test's plan would hide the count
    cs = [_case(tmp_path, f"shadows{i}", "def double(x):\n    return x + x\n\n\nclass Counter:\n    pass\n")
          for i in range(20)]
    quick = plan(a, cs, ["basics", "counter"], full=False)
    assert all(suites == ["basics", "counter"] for suites, _ in quick.values())
    counter = a.exercise("counter")
    suite_texts = {counter.hidden_tests.read_text(), counter.probes.read_text() if counter.probes.is_file() else ""}
    assert sum(src in suite_texts for src in parsed) <= 2  # its suite and probes, once each, for 20 cases
    assert planning.suite_names(counter.hidden_tests, counter.probes) >= {"Counter"}
    edited = tmp_path / "test_hidden.py"
    edited.write_text("def test_x(student):\n    assert student.Renamed\n")
    assert "Renamed" in planning.suite_names(edited, tmp_path / "none.py")
