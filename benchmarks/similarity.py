"""The class review's cost for a class of N notebooks: blank, duplicate, late and the similarity section.

Builds N notebooks of pytorch-fundamentals from the course's own solutions:
each student takes, per exercise, the reference or one of its alternatives
at random (so many pairs share a few exercises' code verbatim, a harder
class than a real one, and a few pairs draw the same solutions for most
exercises: those are listed too), with its variables renamed; a few
students copy another with renamed variables and reordered functions.
Times are CPU seconds too, as the wall clock of a shared machine says
little. It then times, in
one run: reading the notebooks, the flags, the similarity pairs
(:func:`autograder.batch.review.review_class`, as a batch calls it), and
side by side, fingerprinting the same code with copydetect's own Pygments
path (``CodeFingerprint``), to show what the regular-expression tokens save.

    python benchmarks/similarity.py [-n 300]
"""

from __future__ import annotations

import argparse
import io
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch.inputs import Entry  # noqa: E402
from autograder.batch.review import review_class, stub_code, submission_code  # noqa: E402
from autograder.report.similarity import fingerprint, own_code  # noqa: E402

SOLUTIONS = ROOT / "solutions" / "pytorch-fundamentals"


def _rename(code: str, suffix: str) -> str:
    for name in ("x", "y", "out", "loss", "model", "grad", "n", "p"):
        code = re.sub(rf"(?<![\w.]){name}\b(?!\s*=[^=])", f"{name}_{suffix}", code)
    return code


def build_class(n: int, folder: Path, seed: int = 0) -> list[Entry]:
    import nbformat

    rng = random.Random(seed)
    a = load_assignment("pytorch-fundamentals", ROOT)
    options = {ex.id: [ex.reference, *ex.alternatives()] for ex in a.exercises}
    entries = []
    codes: list[list[str]] = []
    for i in range(n):
        if i >= 10 and i % 50 == 0:  # a copier: someone else's work, renamed and reordered
            parts = [_rename(p, f"c{i}") for p in reversed(codes[rng.randrange(len(codes))])]
        else:
            parts = [_rename(rng.choice(options[ex.id]).read_text(), f"s{i}") for ex in a.exercises]
        codes.append(parts)
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(p) for p in parts]
        path = folder / f"student{i:03d}.ipynb"
        nbformat.write(nb, path)
        entries.append(Entry(path=path, source=path.name, submission=path.stem, student=path.stem,
                             sha256=f"{i:064x}", order=(0,)))
    return entries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=300, help="students in the class (default: 300)")
    args = ap.parse_args()
    a = load_assignment("pytorch-fundamentals", ROOT)
    import copydetect  # noqa: F401  (its import, a second of matplotlib, is paid once by the report anyway)

    with tempfile.TemporaryDirectory() as tmp:
        entries = build_class(args.n, Path(tmp))
        t0, c0 = time.perf_counter(), time.process_time()
        review = review_class(a, entries)
        whole, whole_cpu = time.perf_counter() - t0, time.process_time() - c0

        stub = stub_code(a)
        t0 = time.perf_counter()
        codes = [submission_code(e) or "" for e in entries]
        read = time.perf_counter() - t0
        own = [own_code(c, stub) for c in codes]
        c0 = time.process_time()
        for c in own:
            fingerprint(c)
        ours = time.process_time() - c0
        from copydetect import CodeFingerprint

        c0 = time.process_time()
        for c in own:
            CodeFingerprint("submission.py", 25, 6, language="python", fp=io.StringIO(c))
        pygments = time.process_time() - c0

    copiers = sum(1 for i in range(args.n) if i >= 10 and i % 50 == 0)
    print(f"class of {args.n} notebooks ({copiers} planted copiers), pytorch-fundamentals, 11 exercises")
    print(f"  review_class (read, flags, similarity): {whole:6.2f} s wall, {whole_cpu:6.2f} s CPU   "
          f"{len(review.pairs)} similar pairs, {sum(map(len, review.attention.values()))} flags")
    print(f"    of which reading the notebooks:        {read:6.2f} s wall")
    print(f"  fingerprints, regular-expression tokens: {ours:6.2f} s CPU")
    print(f"  fingerprints, copydetect's Pygments:     {pygments:6.2f} s CPU   ({pygments / ours:.1f}x ours)")


if __name__ == "__main__":
    main()
