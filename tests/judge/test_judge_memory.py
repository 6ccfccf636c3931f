"""Each judge worker has a memory limit of its own; going over it costs one test, not the batch."""

from __future__ import annotations

import re
import shutil

from autograder.batch.backends import Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from autograder.grade import GradeOptions
from autograder.session import Budget
from tests.helpers import DEMO_COURSE

HONEST = (
    (DEMO_COURSE / "solutions/demo/basics/reference.py").read_text()
    + "\n# %%\n"
    + (DEMO_COURSE / "solutions/demo/counter/reference.py").read_text()
)
# 240 MiB: under the wire's reply limit (256 MiB), over what this judge may hold on top of itself
HUGE = HONEST + "\n# %%\nimport torch\n\ndef double(x):\n    return torch.zeros(240 * 2**20, dtype=torch.uint8)\n"


def test_a_reply_over_the_judges_own_limit_fails_that_test_and_the_batch_goes_on(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(DEMO_COURSE, course)
    toml = course / "assignments/demo/basics/exercise.toml"
    toml.write_text(re.sub(r"timeout = .*", "timeout = 60", toml.read_text()))  # 240 MiB on a loaded host
    jobs = []
    for name, text in (("huge.py", HUGE), ("honest.py", HONEST)):
        (tmp_path / name).write_text(text)
        jobs.append(Job(id=name, name=name, path=tmp_path / name))
    cfg = WorkerConfig(course=str(course), assignment="demo", judge_memory_gb=0.5,
                       options=GradeOptions(budget=Budget(submission_seconds=120)))
    got = {}
    ProcessBackend(cfg, 1, tmp_path).grade_jobs(
        jobs, lambda job, result, error, worker: got.setdefault(job.name, (result, error))
    )
    honest, error = got["honest.py"]
    assert error == "" and honest["status"] == "graded", error
    assert sum(t["points"] for e in honest["exercises"] for t in e["tests"]) == 6
    huge, error = got["huge.py"]
    assert error == "", error
    tests = {t["name"]: t for e in huge["exercises"] for t in e["tests"]}
    t = tests["double(x) doubles every entry"]
    assert t["status"] == "error" and "grader" in t["message"] and "memory" in t["message"], t["message"]
    assert tests["Counter keeps a running total"]["status"] == "passed"
