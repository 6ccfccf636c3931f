"""The class-level review of a batch: blank, duplicate, late and ambiguously named submissions, and similar code.

Read from the submission files (as data: nothing runs) once every result is
in, and rendered by the gradebook, the class report and the feedback pages
(:mod:`autograder.report.attention`, :mod:`autograder.report.similarity`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from autograder.assignment import Assignment
from autograder.batch.inputs import AMBIGUOUS, Entry
from autograder.errors import LoadError
from autograder.load import load
from autograder.report.attention import Attention, Submitted, class_attention
from autograder.report.similarity import SimilarPair, own_code, similar_pairs


@dataclass
class ClassReview:
    attention: dict[str, list[Attention]] = field(default_factory=dict)  # per student id
    pairs: list[SimilarPair] = field(default_factory=list)


def stub_code(assignment: Assignment) -> str:
    """What every student was given: each exercise's stub, as the notebook holds it."""
    return "\n\n".join(ex.stub.read_text() for ex in assignment.exercises if ex.stub.exists())


def submission_code(entry: Entry) -> str | None:
    """A submission's code cells, joined (None when the file cannot be read: its result says why)."""
    try:
        return "\n\n".join(c.source for c in load(entry.path).cells)
    except (LoadError, OSError):
        return None


def review_class(assignment: Assignment, entries: list[Entry], *, similarity: bool = True) -> ClassReview:
    """Blank, duplicate, late, ambiguous name per student; with ``similarity``, the pairs of near-identical code too."""
    stub = stub_code(assignment)
    code: dict[str, str | None] = {}  # per file content: byte-identical files are read once
    for e in entries:
        if e.sha256 not in code:
            code[e.sha256] = submission_code(e)
    subs = [Submitted(e.student, e.sha256, code[e.sha256], e.late, e.detail if e.how == AMBIGUOUS else "")
            for e in entries]
    attention = class_attention(subs, stub)
    blank = {s for s, found in attention.items() if any(a.kind == "blank" for a in found)}
    own: dict[str, str] = {}
    seen: set[str] = set()
    # byte-identical files are flagged as duplicates already: one of each is compared
    for s in subs if similarity else ():
        if s.code is not None and s.student not in blank and s.sha256 not in seen:
            seen.add(s.sha256)
            own[s.student] = own_code(s.code, stub)
    return ClassReview(attention, similar_pairs(own) if similarity else [])


class EarlyReview:
    """The class review computed in a thread while the batch grades.

    The review reads only the submitted files, never a result, so it starts with the grading: its
    CPU is spread over the batch, where it takes half its time from the wall (two busy cores), instead
    of waiting for the last submission and being waited for, with one core idle, after it.
    :func:`autograder.batch.runner.write_outputs` takes it when it reviewed exactly the entries graded;
    otherwise, or when it failed, the review is computed there as before (and a failure said there).
    """

    def __init__(self, assignment: Assignment, entries: list[Entry], *, similarity: bool) -> None:
        self.assignment = assignment
        self.entries = list(entries)
        self.similarity = similarity
        self._done: ClassReview | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start reviewing (once; later calls do nothing)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="tg-review")
            self._thread.start()

    def _run(self) -> None:
        try:
            self._done = review_class(self.assignment, self.entries, similarity=self.similarity)
        except Exception:  # noqa: BLE001 - write_outputs reviews again, and says what failed
            self._done = None

    def result(self, entries: list[Entry], *, similarity: bool) -> ClassReview | None:
        """The review of ``entries`` if this one was started for exactly them (waiting for it to finish)."""
        if self._thread is None or similarity != self.similarity or list(entries) != self.entries:
            return None
        self._thread.join()
        return self._done
