"""Judge-side generated inputs: the same for every submission, drawn once per judge process."""

from __future__ import annotations

from hypothesis import strategies as st

from autograder.judge.generated import draw

PAIRS = st.tuples(st.integers(0, 10**6), st.sampled_from(["a", "b", "c"]))


def test_draw_is_reproducible_for_a_label():
    assert draw(PAIRS, 15, "suite v1") == draw(PAIRS, 15, "suite v1")


def test_draw_gives_n_examples_and_other_labels_other_inputs():
    first = draw(PAIRS, 15, "suite v1")
    assert len(first) == 15
    assert len({x for x, _ in first}) > 5, "the examples should vary"
    assert draw(PAIRS, 15, "suite v2") != first


SHAPES = st.tuples(st.integers(1, 6), st.integers(1, 6), st.lists(st.integers(0, 9), min_size=1, max_size=4))


def test_a_draw_is_reproducible_and_each_caller_gets_its_own_copy():
    first = draw(SHAPES, 15, "test/shapes v1")
    first[0][2].append("changed by a test")  # a test that mutates its inputs
    second = draw(SHAPES, 15, "test/shapes v1")
    assert len(second) == 15 and "changed by a test" not in second[0][2]
    assert second == draw(SHAPES, 15, "test/shapes v1")
    assert second != draw(SHAPES, 15, "test/shapes v2")  # the label is the seed


def test_another_strategy_under_the_same_label_is_drawn_from_not_served_from_the_cache():
    small = draw(st.integers(0, 3), 10, "test/reused label")
    big = draw(st.integers(100, 200), 10, "test/reused label")
    assert all(0 <= v <= 3 for v in small) and all(100 <= v <= 200 for v in big)


# A module of the course (any module outside site-packages) whose constants Hypothesis could pick up.
COURSE_HELPER = "LIMIT = 424242\nSCALE = 0.123456789\nNAME = 'qwertyuiop'\n"
DRAWS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from hypothesis import Phase, given, settings, strategies as st
if sys.argv[2] == "with helper":
    import course_helper  # noqa: F401 - imported by one judge and not by another
if sys.argv[3] == "judge":
    from autograder.judge import plugin
    plugin.pytest_collection_finish(None)
from autograder.judge.generated import draw
drawn = draw(st.tuples(st.integers(0, 10**6), st.floats(0, 1), st.text(max_size=12)), 200, "suite v1")
seen = []
@settings(derandomize=True, max_examples=200, database=None, phases=[Phase.explicit, Phase.generate])
@given(st.integers(0, 10**6))
def suite_test(x):
    seen.append(x)
suite_test()
print(json.dumps([repr(drawn), seen]))
"""


def _examples(tmp_path, helper: bool, judge: bool) -> list:
    import json
    import subprocess
    import sys

    (tmp_path / "course_helper.py").write_text(COURSE_HELPER)
    out = subprocess.run(
        [sys.executable, "-c", DRAWS, str(tmp_path), "with helper" if helper else "alone", "judge" if judge else "-"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )
    return json.loads(out.stdout)


def test_generated_inputs_do_not_depend_on_what_else_the_judge_imported(tmp_path):
    """Hypothesis reads constants from the source of imported local modules; the judge must not let it.

    A batch worker, an ``--exercise`` run and ``validate`` import different
    modules: the same seed must still give the same inputs, or one submission's
    grade depends on how it was graded.
    """
    plain = _examples(tmp_path, helper=False, judge=False)
    assert _examples(tmp_path, helper=True, judge=False) != plain, "this test no longer sees Hypothesis's constants"
    assert _examples(tmp_path, helper=True, judge=True) == _examples(tmp_path, helper=False, judge=True)


PLUGIN = ("import os\n\n\ndef hook():\n    with open(os.environ['TG_PLUGIN_MARK'], 'a') as f:\n"
          "        f.write(f'{os.getpid()}\\n')\n")


def test_a_judge_runs_no_installed_hypothesis_plugin(tmp_path):
    """Installed packages' Hypothesis entry points are not the course's: a judge never runs them.

    One (trio's, which selenium brings) walks the judge's whole heap when Hypothesis is imported; any of
    them could change what a suite's strategies draw in one environment and not in another.
    """
    import csv
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT

    site = tmp_path / "site"
    dist = site / "tg_mark_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tg-mark-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[hypothesis]\nmark = tg_mark_plugin:hook\n")
    (site / "tg_mark_plugin.py").write_text(PLUGIN)
    mark = tmp_path / "ran"
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_NO_PLUGINS"}
    env.update(PYTHONPATH=f"{site}{os.pathsep}{ROOT}", TG_PLUGIN_MARK=str(mark))
    subprocess.run([sys.executable, "-c", "import hypothesis"], env=env, check=True, timeout=120)
    assert mark.read_text().strip(), "this test's plugin is not seen by Hypothesis"
    mark.unlink()

    sub = tmp_path / "subs" / "alice.py"
    sub.parent.mkdir()
    sub.write_text((ROOT / "solutions/pytorch-fundamentals/views/reference.py").read_text())
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(sub.parent), "--assignment",
                           "pytorch-fundamentals", "--exercise", "views", "--out", str(tmp_path / "out")],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open()))
    assert [(r["student"], r["views"]) for r in rows] == [("alice", "10")], rows
    assert not mark.exists(), f"a judge ran an installed Hypothesis plugin (pids {mark.read_text().split()})"
