"""Rebuild samples/: example submissions of pytorch-fundamentals for the README's first command.

    python scripts/make_samples.py

alice: the reference solution as a notebook (full marks).
bob: the untouched student notebook (0, with a "not implemented yet" per test).
carol: a realistic partial attempt: some exercises right, two misconceptions
       (mutants), one cell with a syntax error, one with a stray debugging line (NameError).
dave: a cheater's .py file that patches torch's comparisons and hunts for the hidden tests.
erin: a notebook damaged by a bad merge (not valid JSON).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import load_assignment  # noqa: E402
from autograder.authoring.notebook import build  # noqa: E402

OUT = ROOT / "samples"


def main() -> None:
    a = load_assignment("pytorch-fundamentals", ROOT)
    OUT.mkdir(exist_ok=True)
    nbformat.write(build(a, "reference"), OUT / "alice.ipynb")
    nbformat.write(build(a, "stub"), OUT / "bob.ipynb")

    sol = ROOT / "solutions" / "pytorch-fundamentals"
    swap = {
        "softmax_grad": sol / "softmax_grad" / "mutants" / "not_divided_by_batch.py",
        "noisy_digits": sol / "noisy_digits" / "mutants" / "noise_in_init.py",
        "amp_loop": a.exercise("amp_loop").stub,
        "compile": a.exercise("compile").stub,
    }
    carol = build(a, "reference", swap=swap)
    code = [c for c in carol.cells if c.cell_type == "code"]
    views = next(c for c in code if "def flatten_any" in c.source)
    views.source = views.source.replace("def flatten_any(x):", "def flatten_any(x)", 1)  # a missing colon
    code[-1].source += "\n\n# left over from debugging\nprint(model_outputs)\n"  # a NameError
    nbformat.write(carol, OUT / "carol.ipynb")

    dave = (
        '"""Tries to win without doing the work."""\n'
        "import os\n\nimport torch\n\n"
        "torch.allclose = lambda *a, **k: True\n"
        "torch.testing.assert_close = lambda *a, **k: None\n"
        "FOUND = [os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs if f == 'test_hidden.py']\n\n\n"
        "def shares_storage(a, b):\n    return True\n\n\n"
        "def softmax_ce_grad(logits, target):\n    return torch.zeros_like(logits)\n"
    )
    (OUT / "dave.py").write_text(dave)
    text = (OUT / "alice.ipynb").read_text()
    (OUT / "erin.ipynb").write_text("<<<<<<< HEAD\n" + text[: len(text) // 2] + "\n=======\n")
    print(f"wrote {', '.join(sorted(p.name for p in OUT.iterdir()))}")


if __name__ == "__main__":
    main()
