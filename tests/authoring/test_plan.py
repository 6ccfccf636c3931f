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
