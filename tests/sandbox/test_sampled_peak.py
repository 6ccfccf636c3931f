"""Peak memory without a cgroup: the judge samples the sandbox tree's resident memory from /proc.

Inside the documented ``docker run`` line the cgroup file system is read-only, so the two tests whose point
rests on the sandbox's peak memory (accumulation's whole batch, checkpointing's kept graphs) would be withheld
from every student. These tests hold the fallback to the kernel's counts: a child's memory is counted, a
freed peak is still seen, and the real suite tells the whole batch from micro-batches without a cgroup.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.assignment import load_assignment
from autograder.authoring.lint import mutant_code
from autograder.grade import GradeOptions, grade
from autograder.sandbox.client import SandboxServer
from autograder.sandbox.sampled_peak import SampledPeak, children_listed, tree_resident
from tests.helpers import ROOT, build_submission, until

pytestmark = pytest.mark.skipif(not children_listed(), reason="this kernel does not list a process's children "
                                "(CONFIG_PROC_CHILDREN)")

# A parent that starts a child; on "go" the child holds 256 MiB for 0.3 s, frees it, and says "done".
HOLDER = r'''
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", """
import sys, time
sys.stdin.readline()
block = bytearray(256 * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
time.sleep(0.3)
del block
print("done", flush=True)
sys.stdin.readline()
"""], stdin=subprocess.PIPE, stdout=sys.stdout, text=True)
print("ready", flush=True)
for line in sys.stdin:
    child.stdin.write(line)
    child.stdin.flush()
'''


def test_a_childs_freed_peak_is_measured_from_outside():
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        until(lambda: tree_resident(proc.pid) and tree_resident(proc.pid) > 2 * 2**20, 10, "the child started")
        peak = SampledPeak(proc.pid)
        assert peak.start()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"  # the block is freed before growth() reads
        grown = peak.growth()
        assert grown is not None and grown >= 250 * 2**20, grown
        assert tree_resident(proc.pid) - peak.before < 64 * 2**20  # it was the peak, not what is held now
    finally:
        proc.kill()
        proc.wait()


def test_a_process_that_is_gone_measures_nothing():
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert tree_resident(int(proc.stdout)) is None
    assert not SampledPeak(int(proc.stdout)).start()


SOLUTIONS = ROOT / "solutions" / "pytorch-fundamentals"


def _accumulation(folder, name, mutant=None):
    ref = SOLUTIONS / "accumulation" / "reference.py"
    if mutant is None:
        return build_submission(folder / f"{name}.py", ref)
    return build_submission(folder / f"{name}.py", mutant_code(SOLUTIONS / "accumulation" / "mutants" /
                                                               f"{mutant}.py", ref))


def test_without_a_cgroup_the_suite_still_tells_the_whole_batch_from_micro_batches(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHGRADER_NO_CGROUPS", "1")
    files = [_accumulation(tmp_path, "micro"), _accumulation(tmp_path, "whole", "full_batch")]
    assignment = load_assignment("pytorch-fundamentals", ROOT)
    with SandboxServer() as server:
        results = {r.submission: r for r in grade(assignment, files, options=GradeOptions(
            exercises=["accumulation"]), server=server)}
    def outside(who):
        (t,) = [t for t in results[who].exercise("accumulation").tests
                if t.nodeid.endswith("test_never_the_whole_batch_at_once")]
        return t

    micro, whole = outside("micro"), outside("whole")
    assert micro.status == "passed" and micro.points == micro.max_points == 1, micro.message
    assert whole.status == "failed" and whole.misconception == "full_batch", whole.message
    assert "cgroup" in results["micro"].protections["memory"], results["micro"].protections  # none was made
    assert not results["micro"].grader_errors and not results["whole"].grader_errors


def test_a_cgroup_whose_peak_cannot_be_reset_is_sampled_through_its_current_usage(tmp_path):
    """cgroup v2 before Linux 6.12 keeps memory.peak since the cgroup was made: the judge samples memory.current
    instead of withholding the points. The file stands in for the kernel's: the reader and the sampler are real."""
    import threading
    import time

    from autograder.sandbox.sampled_peak import cgroup_current

    current = tmp_path / "memory.current"
    current.write_text("1000000\n")
    peak = SampledPeak(os.getpid(), read=cgroup_current(str(current)))
    assert peak.start() and peak.before == 1_000_000

    def spike():
        for value in (1_000_000, 90_000_000, 1_500_000):
            (tmp_path / "next").write_text(f"{value}\n")
            os.replace(tmp_path / "next", current)  # whole, as the kernel's file reads
            time.sleep(0.05)
    t = threading.Thread(target=spike)
    t.start()
    t.join()
    assert peak.growth() == 89_000_000
    current.unlink()
    assert not SampledPeak(os.getpid(), read=cgroup_current(str(current))).start()
