"""The similarity section: planted copies are found, independent correct solutions are not paired.

The class is made of the course's own solutions: the reference and its
alternatives (written independently, each a different correct approach) are
the honest students; each planted copy takes one of them and renames its
variables, reorders its functions and rewrites its comments.
"""

from __future__ import annotations

import ast
import re

from autograder.assignment import load_assignment
from autograder.report.classreport import class_report_html
from autograder.report.similarity import marked_html, own_code, similar_pairs
from tests.helpers import ROOT

SOLUTIONS = ROOT / "solutions" / "pytorch-fundamentals"
ASSIGNMENT = load_assignment("pytorch-fundamentals", ROOT)
STUB = "\n\n".join(ex.stub.read_text() for ex in ASSIGNMENT.exercises)
IDS = [ex.id for ex in ASSIGNMENT.exercises]


def honest_class() -> dict[str, list[str]]:
    """Six students, each a list of exercises' code: the reference, and five who each took other alternatives."""
    codes = {"ref": [(SOLUTIONS / e / "reference.py").read_text() for e in IDS]}
    for j in range(5):
        parts = []
        for e in IDS:
            alts = sorted((SOLUTIONS / e / "alternatives").glob("*.py"))
            parts.append(alts[(j + len(e)) % len(alts)].read_text() if alts else
                         (SOLUTIONS / e / "reference.py").read_text())
        codes[f"alt{j}"] = parts
    return codes


def rename_locals(code: str, suffix: str) -> str:
    """Every argument and local variable renamed (what a copier does first); the contract's names stay."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.arg) and node.arg not in ("self", "ctx"):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    top = {n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    names -= top
    for n in sorted(names, key=len, reverse=True):
        code = re.sub(rf"(?<![\w.]){re.escape(n)}\b", f"{n}_{suffix}", code)
    return code


def reorder_functions(code: str) -> str:
    """The top-level statements in reverse order (imports stay first)."""
    tree = ast.parse(code)
    lines = code.splitlines()
    chunks, imports = [], []
    for i, node in enumerate(tree.body):
        end = tree.body[i + 1].lineno - 1 if i + 1 < len(tree.body) else len(lines)
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        text = "\n".join(lines[start - 1:end])
        (imports if isinstance(node, ast.Import | ast.ImportFrom) else chunks).append(text)
    return "\n".join(imports) + "\n\n\n" + "\n\n\n".join(reversed(chunks)) + "\n"


def recomment(code: str) -> str:
    """Every comment and docstring removed, and comments of the copier's own added."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Module) and ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    out = []
    for i, line in enumerate(ast.unparse(tree).splitlines()):
        out.append(line)
        if i % 3 == 0:
            out.append(" " * (len(line) - len(line.lstrip())) + "# my own working, step by step")
    return "\n".join(out)


def disguised(parts: list[str], suffix: str) -> str:
    """Each exercise renamed, reordered and recommented; the exercises in reverse order."""
    return "\n\n\n".join(recomment(reorder_functions(rename_locals(p, suffix))) for p in reversed(parts))


def test_planted_copies_pair_up_and_independent_solutions_do_not():
    honest = honest_class()
    codes = {s: "\n\n".join(parts) for s, parts in honest.items()}
    codes["copy_of_alt1"] = disguised(honest["alt1"], "x")
    codes["copy_of_ref"] = disguised(honest["ref"], "mine")
    codes["copy_of_alt3"] = rename_locals(codes["alt3"], "q")  # renamed only
    assert "_x" in codes["copy_of_alt1"] and "my own working" in codes["copy_of_ref"]
    pairs = similar_pairs({s: own_code(c, STUB) for s, c in codes.items()})
    found = {frozenset((p.a.student, p.b.student)) for p in pairs}
    assert found == {frozenset(("alt1", "copy_of_alt1")), frozenset(("ref", "copy_of_ref")),
                     frozenset(("alt3", "copy_of_alt3"))}, [(p.a.student, p.b.student, p.similarity) for p in pairs]
    for p in pairs:
        assert p.similarity >= 0.7 and p.a.marks and p.b.marks
        for side in (p.a, p.b):  # the marks are real regions of the code shown
            assert all(0 <= s < e <= len(side.code) for s, e in side.marks)


def test_each_alternative_alone_is_not_a_copy_of_its_reference():
    """Exercise by exercise: the course's independent correct solutions never pair up."""
    for e in IDS:
        files = [SOLUTIONS / e / "reference.py", *sorted((SOLUTIONS / e / "alternatives").glob("*.py"))]
        stub = (ROOT / "assignments" / "pytorch-fundamentals" / e / "stub.py").read_text()
        codes = {f.stem: own_code(f.read_text(), stub) for f in files}
        assert similar_pairs(codes) == [], e


def test_the_stub_makes_no_two_students_alike():
    """Two students who each wrote one different function, the rest of the stub untouched, share nothing."""
    a = STUB.replace("def shares_storage(a, b):\n    \"\"\"True exactly when tensors a and b are backed by the same "
                     "storage.\"\"\"\n    raise NotImplementedError",
                     "def shares_storage(a, b):\n    return a.untyped_storage().data_ptr() == "
                     "b.untyped_storage().data_ptr()")
    b = STUB.replace("raise NotImplementedError", "return None", 1)
    assert a != STUB and b != STUB
    assert similar_pairs({"a": own_code(a, STUB), "b": own_code(b, STUB), "c": own_code(STUB, STUB)}) == []


def test_student_code_is_escaped_in_the_side_by_side_view():
    hostile = ("def f(x):\n    s = '</pre><script>alert(1)</script>'\n    t = x.view(-1).contiguous().sum() * 3\n"
               "    return [s, t, x.reshape(2, -1).mean(dim=0).max(), x.flip(0).cumsum(0)]\n")
    other = hostile.replace("x", "y").replace(" s ", " u ").replace("[s,", "[u,")
    pairs = similar_pairs({"eve": hostile, "mallory": other}, common_share=1.0)
    assert len(pairs) == 1
    html = marked_html(pairs[0].a.code, pairs[0].a.marks)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<mark>" in html
    page = class_report_html([], title="Demo", exercise_ids=[], pairs=pairs)
    assert "<script>alert" not in page and "Pair 1: eve and mallory" in page


def test_a_class_that_copied_one_source_lists_at_most_the_limit(tmp_path):
    from autograder.batch.inputs import Entry
    from autograder.batch.review import review_class

    source = "\n\n".join(honest_class()["alt2"])
    codes = {f"c{i:02d}": own_code(rename_locals(source, f"v{i}"), STUB) for i in range(9)}
    pairs = similar_pairs(codes, limit=10)
    assert len(pairs) == 10 and all(p.similarity >= 0.7 for p in pairs)  # 36 pairs exist: 10 listed
    assert len(similar_pairs(codes)) == 36

    entries = []  # byte-identical files are duplicates (flagged), compared once
    for i in range(12):
        path = tmp_path / f"s{i}.py"
        path.write_text(source)
        entries.append(Entry(path=path, source=path.name, submission=path.stem, student=path.stem, sha256="same",
                             order=(0,)))
    review = review_class(ASSIGNMENT, entries)
    assert review.pairs == [] and sorted(review.attention) == sorted(e.student for e in entries)
    assert all(a.kind == "duplicate" for found in review.attention.values() for a in found)


SAME_IN_EVERY_RUN = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.report.test_similarity import STUB, disguised, honest_class
from autograder.report.similarity import own_code, similar_pairs
honest = honest_class()
codes = {s: "\n\n".join(parts) for s, parts in honest.items()}
codes["copy_of_alt1"] = disguised(honest["alt1"], "x")
pairs = similar_pairs({s: own_code(c, STUB) for s, c in codes.items()})
print(json.dumps([[p.a.student, p.b.student, p.a.similarity, p.b.similarity, p.a.marks, p.b.marks] for p in pairs]))
"""


def test_the_pairs_and_their_shares_are_the_same_in_every_run():
    """Winnowing keeps each window's smallest hash: with Python's salted ``hash()`` (copydetect's), the kept
    fingerprints, the shares and so the flagged pairs changed from one run of the class report to the next."""
    import os
    import subprocess
    import sys

    runs = []
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", SAME_IN_EVERY_RUN, str(ROOT)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        runs.append(done.stdout)
    assert runs[0] == runs[1] and '"copy_of_alt1"' in runs[0]
