"""Issue 22, round three, distributed: nothing a rank says about itself earns a point.

Each attack is the three rank exercises' references plus the attack's functions, graded in one batch
with an honest submission last. Types are checked on the values themselves (`type(v) is float`), the
group's survival by one all_reduce of a value the judge chose, which files exist by listing functions
captured before student code, and the checkpoint is decoded outside the student's processes.
"""

from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.grade import GradeOptions, grade
from autograder.judge.tamper import KNOWN_BYPASSES
from autograder.session import Budget
from tests.helpers import ROOT, build_submission

ATTACKS = ROOT / "tests" / "exploits" / "round3_distributed"
EXERCISES = ["ddp_step", "global_metrics", "rank_zero_checkpoint"]
SOLUTIONS = ROOT / "solutions" / "distributed-training"


@pytest.fixture(scope="module")
def graded(server, tmp_path_factory):
    assignment = load_assignment("distributed-training", ROOT)
    refs = [SOLUTIONS / e / "reference.py" for e in EXERCISES]
    subs = tmp_path_factory.mktemp("round3-distributed")
    files = [build_submission(subs / src.name, *refs, src) for src in sorted(ATTACKS.glob("*.py"))]
    files.append(build_submission(subs / "zz_honest.py", *refs))
    options = GradeOptions(exercises=EXERCISES, budget=Budget(cell_seconds=30, submission_seconds=400))
    return {r.submission: r for r in grade(assignment, files, options=options, server=server)}


def _test(result, function):
    return next(t for e in result.exercises for t in e.tests if t.nodeid.endswith(f"::{function}"))


def _flagged(result, kind):
    return [f for f in result.flags if f.reason == KNOWN_BYPASSES[kind]]


def test_the_honest_submission_graded_last_gets_full_marks(graded):
    honest = graded["zz_honest"]
    assert honest.total == 30, [(t.nodeid, t.message) for e in honest.exercises for t in e.tests
                                if t.status != "passed"]
    assert not honest.flagged


def test_a_tensor_subclass_named_float_is_not_a_float(graded):
    r = graded["tensor_named_float"]
    t = _test(r, "test_global_mean_returns_a_float_on_every_rank")
    assert t.points == 0 and t.misconception == "types", t


def test_a_float_subclass_named_int_is_not_an_int(graded):
    r = graded["float_named_int"]
    t = _test(r, "test_resume_returns_the_epoch_as_int")
    assert t.points == 0 and t.misconception == "epoch_type", t


def test_a_destroyed_group_is_seen_whatever_is_initialized_says(graded):
    r = graded["rebinds_is_initialized"]
    t = _test(r, "test_leaves_the_process_group_to_the_grader")
    assert t.points == 0 and t.misconception == "destroys_group", t
    assert _flagged(r, "rebinds_machinery"), r.flags


def test_files_every_rank_wrote_are_seen_whatever_listdir_says(graded):
    r = graded["rebinds_listdir"]
    t = _test(r, "test_only_global_rank_zero_writes")
    assert t.points == 0 and t.misconception == "every_rank_writes", t
    assert _flagged(r, "rebinds_machinery"), r.flags


def test_forcing_weights_only_off_in_the_sandbox_changes_nothing(graded):
    r = graded["weights_only_off"]
    t = _test(r, "test_file_loads_with_weights_only")
    assert t.points == 0 and t.misconception == "weights_only", t
    assert _flagged(r, "rebinds_machinery"), r.flags
