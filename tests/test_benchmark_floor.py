"""benchmarks/batch.py's floor grades each student on their own code, as the sandboxes do (timings never asserted).

The floor runs student code in a thread of its judge: a student who rebinds torch's functions would, without
the floor's undoing, grade every later student (and the judge's own comparisons) with them. speed.py then
reported "same scores in the floor and the batch: NO" for the samples mix and for the correct class after it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import DEMO_COURSE, ROOT

SCRIPT = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from autograder.assignment import load_assignment
from benchmarks.batch import floor
demo = load_assignment("demo", Path(sys.argv[2]))
cheat, wrong, right = (Path(p) for p in sys.argv[3:6])
together = [r.total for r in floor(demo, [cheat, wrong, right], None)]
alone = [r.total for r in floor(demo, [wrong, right], None)]
import torch
print(json.dumps({"together": together, "alone": alone, "isclose": torch.isclose.__module__}))
"""

CHEAT = """import torch
torch.isclose = lambda a, b, **k: torch.ones_like(a, dtype=torch.bool)
torch.Tensor.mean = lambda self, *a, **k: self.sum(*a, **k) * 0
def double(x):
    return x
def row_means(x):
    return x.mean(dim=1)
"""
WRONG = "import torch\n\ndef double(x):\n    return x + x + 1\n\ndef row_means(x):\n    return x.sum(dim=1)\n"
RIGHT = "import torch\n\ndef double(x):\n    return x * 2\n\ndef row_means(x):\n    return x.mean(dim=1)\n"


def test_a_student_who_rebinds_torch_grades_only_themselves_in_the_floor(tmp_path: Path):
    paths = []
    for name, text in (("cheat.py", CHEAT), ("wrong.py", WRONG), ("right.py", RIGHT)):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT), str(DEMO_COURSE), *paths],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    wrong_alone, right_alone = got["alone"]
    assert wrong_alone < right_alone, got
    assert got["together"][1:] == [wrong_alone, right_alone], "the cheat's rebinding graded the next students"
    assert got["isclose"] == "torch", "the judge's torch.isclose was left rebound after the floor"
