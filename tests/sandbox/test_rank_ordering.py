"""Issue 23: a verdict never depends on how the machine schedules the ranks.

Two saves that lack the barrier (the contract's "no rank returns before the file
is complete"), each with the schedule a loaded machine could give it, forced
with a sleep: the other ranks descheduled until after rank 0 has written, or
rank 0 descheduled before it writes. Before the probes ordered the ranks
themselves, the first passed the missing-barrier test (the others looked only
after the file was there) and the second failed both resume tests (the others
loaded a file not yet written). Both must get the same verdict: the missing
barrier named, resume judged on a complete file.
"""

from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.grade import GradeOptions, grade
from autograder.session import Budget
from tests.helpers import ROOT, build_submission

EXERCISE = "rank_zero_checkpoint"
REFERENCE = ROOT / "solutions" / "distributed-training" / EXERCISE / "reference.py"
SAVE = '''
import time

import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):  # no barrier
    if dist.get_rank() == 0:
        time.sleep({writer})
        torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}}, path)
    else:
        time.sleep({readers})
'''
SCHEDULES = {"late_readers": {"writer": 0, "readers": 0.6}, "late_writer": {"writer": 0.5, "readers": 0}}


@pytest.fixture(scope="module")
def graded(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rank-ordering")
    files = [build_submission(folder / f"{name}.py", REFERENCE, SAVE.format(**delays))
             for name, delays in SCHEDULES.items()]
    options = GradeOptions(exercises=[EXERCISE], keyword="no_rank_returns or continues_exactly",  # the two that raced
                           budget=Budget(cell_seconds=30, submission_seconds=200))
    results = grade(load_assignment("distributed-training", ROOT), files, options=options, server=server)
    return {r.submission: [t for e in r.exercises for t in e.tests] for r in results}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_a_missing_barrier_costs_exactly_its_own_test_whatever_the_schedule(graded, schedule):
    tests = graded[schedule]
    failed = [(t.nodeid.rsplit("::", 1)[-1], t.misconception) for t in tests if t.status != "passed"]
    assert failed == [("test_no_rank_returns_before_the_file_is_complete", "no_barrier")], \
        [(t.nodeid, t.message) for t in tests if t.status != "passed"]


def test_both_schedules_read_the_same_message(graded):
    def message(tests):
        return next(t.message for t in tests if t.status != "passed")

    assert message(graded["late_readers"]) == message(graded["late_writer"])
