"""Which submissions share their code: winnowing fingerprints (MOSS's algorithm), as copydetect implements it.

Only what a student wrote is compared: the stub's own lines, comments, blank
lines and the notebook's check cells are taken out first (the lines
:func:`own_code` keeps). The rest is normalised
as copydetect does: every variable or function name becomes one letter and
every string another, so renaming changes nothing, and comments and layout
are dropped, so editing them changes nothing. Attribute names (``.view``,
``.reshape``) and builtins stay: a copier cannot rename the API, and two
independent solutions differ most in which calls they chose. copydetect's
winnowing then selects the fingerprints (a set, so reordering functions
changes little), and its overlap functions give each pair's shared share
and regions. As in MOSS, a fingerprint that many submissions share is an
idiom of the exercise, not a copy, and is left out.

The normalising splits Python's tokens with one regular expression instead
of copydetect's Pygments lexer, which takes a tenth of a second per notebook
(half a minute for a class of 300); the pattern never fails on code cut out
of its blocks or with a syntax error, and it tells attribute names apart. Pairs are found without comparing
all n² of them one by one: only fingerprints held by two or more
submissions can make a pair, so the submissions-by-shared-fingerprints
matrix is small, and one product of it with itself counts every pair's
shared fingerprints. Only the pairs sharing enough are compared in full.
"""

from __future__ import annotations

import bisect
import builtins
import functools
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

K = 25  # copydetect's noise threshold: a match shorter than this (in normalised characters) is never seen
GUARANTEE = 30  # a match this long is always seen (the winnowing window follows from the two)
THRESHOLD = 0.7  # a pair is listed when each side's code is at least this share shared with the other
COMMON_SHARE = 0.3  # a fingerprint in more than this share of a class (and more than MIN_COMMON) is an idiom
MIN_COMMON = 10  # MOSS's default (-m 10): a passage in more submissions than this is ignored
LIMIT = 200  # pairs listed at most (a class that copied one source would otherwise list thousands)
_BUILTINS = frozenset(dir(builtins))


@dataclass
class Side:
    student: str
    similarity: float  # the share of this side's code (fingerprinted characters) found in the other
    code: str  # what the student wrote (the stub's lines left out), as shown
    marks: list[tuple[int, int]] = field(default_factory=list)  # [start, end) character spans of ``code`` shared


@dataclass
class SimilarPair:
    a: Side
    b: Side

    @property
    def similarity(self) -> float:
        return min(self.a.similarity, self.b.similarity)


@dataclass
class Fingerprint:
    code: str
    normalised: str
    where: list[tuple[int, int]]  # per normalised character: the [start, end) of its token in ``code``
    hashes: set
    hash_idx: dict
    coverage: float


# Python's tokens, as one pattern: strings (any prefix, triple-quoted too, unterminated ones to the line's end),
# comments, names, numbers, then any other non-blank character (an operator). Matching never fails, so code
# cut out of its blocks or with a syntax error is still compared.
_TOKEN = re.compile(r"""
    (?P<string>(?:[rRbBuUfF]{0,2})(?:\'\'\'[\s\S]*?(?:\'\'\'|\Z)|\"\"\"[\s\S]*?(?:\"\"\"|\Z)
                |'(?:\\.|[^'\\\n])*(?:'|$)|"(?:\\.|[^"\\\n])*(?:"|$)))
  | (?P<comment>\#[^\n]*)
  | (?P<name>[^\W\d]\w*)
  | (?P<number>\d[\w.]*|\.\d[\w.]*)
  | (?P<op>\S)
""", re.VERBOSE | re.MULTILINE)
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


def _tokens(code: str) -> list[tuple[str, int, int]]:
    """copydetect's normalisation, token by token: (normalised text, start, end) in ``code``.

    Names become V, a function's name F, a class's O, strings S; keywords, builtins, attribute names,
    numbers and operators stay. Comments go, and so do docstrings (a string standing alone on its lines):
    here they are comments too.
    """
    out = []
    prev = ""
    for m in _TOKEN.finditer(code):
        kind, text = m.lastgroup, m.group()
        if kind == "comment":
            continue
        start, end = m.span()
        word = text
        if kind == "name" and text not in _KEYWORDS:
            if prev in ("def", "class"):
                word = "F" if prev == "def" else "O"
            elif prev != "." and text not in _BUILTINS:
                word = "V"
        elif kind == "string":
            line_start = code.rfind("\n", 0, start) + 1
            line_end = code.find("\n", end)
            if not code[line_start:start].strip() and not code[end:len(code) if line_end < 0 else line_end].strip():
                continue  # a docstring
            word = "S"
        out.append((word, start, end))
        prev = text
    return out


def normalise(code: str) -> tuple[str, list[tuple[int, int]]]:
    """The normalised code (:func:`_tokens`), with each of its characters' token span in ``code``."""
    words, where = [], []
    for word, start, end in _tokens(code):
        words.append(word)
        where += [(start, end)] * len(word)
    return "".join(words), where


_CHECK_CELL = 'from autograder import check\ncheck("exercise")'  # what the notebook adds after each exercise


def _by_line(code: str) -> tuple[list[int], dict[int, list[tuple[str, int, int]]]]:
    starts = [0, *(m.end() for m in re.finditer("\n", code))]
    lines: dict[int, list[tuple[str, int, int]]] = {}
    for tok in _tokens(code):
        lines.setdefault(bisect.bisect_right(starts, tok[1]) - 1, []).append(tok)
    return starts, lines


@functools.lru_cache(maxsize=8)
def _stub_lines(stub: str) -> frozenset[str]:
    """The stub's lines, normalised (the check cells' too): once per class, not once per student."""
    return frozenset("".join(w for w, _, _ in toks) for toks in _by_line(stub + "\n" + _CHECK_CELL)[1].values())


def own_code(code: str, stub: str) -> str:
    """What the student wrote: ``code`` without the stub's lines, comments, docstrings, blank lines, check cells.

    A line is the stub's when, normalised, it is one of the stub's lines: the stub's own, or with its
    arguments renamed. Indentation is kept, for reading.
    """
    given = _stub_lines(stub)
    starts, lines = _by_line(code)
    keep = []
    for row, toks in sorted(lines.items()):
        if "".join(w for w, _, _ in toks) not in given:
            end = starts[row + 1] - 1 if row + 1 < len(starts) else len(code)
            keep.append(code[starts[row]:end].rstrip())
    return "\n".join(keep)


def fingerprint(code: str) -> Fingerprint:
    from copydetect.utils import get_token_coverage, winnow

    norm, where = normalise(code)
    hashes, positions = winnow(kgram_hashes(norm, K), window_size=GUARANTEE - K + 1, remove_duplicates=False)
    idx: dict[int, list[int]] = {}
    for h, i in zip(hashes.tolist(), positions.tolist(), strict=True):
        idx.setdefault(h, []).append(i)
    return Fingerprint(code, norm, where, set(idx), idx, get_token_coverage(idx, K, len(norm)))


_BASE = 0x100000001B3  # FNV-1a's 64-bit prime: odd, so the rolling hash below loses no bits


def kgram_hashes(text: str, k: int) -> np.ndarray:
    """A 64-bit hash of every ``k``-character window of ``text``, the same in every process.

    copydetect hashes k-grams with Python's ``hash()``, which is salted per
    interpreter: winnowing keeps each window's smallest hash, so which
    fingerprints are kept, each pair's shares and so which pairs are flagged
    would change from one run of the class report to the next. A polynomial
    hash over the characters' code points (arithmetic modulo 2**64, one
    vectorised step per position of the window) is the same everywhere, and
    a final mix spreads it so that the minima winnowing picks are not biased
    toward some characters.
    """
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = h * np.uint64(_BASE) + codes[j:j + n]
        h ^= h >> np.uint64(33)  # murmur3's finaliser
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(33)
    return h.view(np.int64)


def compare(a: Fingerprint, b: Fingerprint) -> tuple[tuple[float, float], tuple[list, list]]:
    """Each side's shared share, and its shared spans in its code (copydetect's overlap and slices)."""
    import numpy as np
    from copydetect.utils import find_fingerprint_overlap, get_copied_slices

    idx_a, idx_b = find_fingerprint_overlap(a.hashes, b.hashes, a.hash_idx, b.hash_idx)
    sims, spans = [], []
    for fp, idx in ((a, idx_a), (b, idx_b)):
        sl = get_copied_slices(np.asarray(idx, dtype=np.int64), K)
        shared = float(np.sum(sl[1] - sl[0])) if len(sl[0]) else 0.0
        sims.append(shared / fp.coverage if fp.coverage else 0.0)
        spans.append([(fp.where[int(s)][0], fp.where[min(int(e), len(fp.where)) - 1][1])
                      for s, e in zip(sl[0], sl[1], strict=True)])
    return (sims[0], sims[1]), (spans[0], spans[1])


def similar_pairs(codes: Mapping[str, str], *, threshold: float = THRESHOLD, common_share: float = COMMON_SHARE,
                  limit: int = LIMIT) -> list[SimilarPair]:
    """Pairs of students whose code is near-identical, most similar first; at most ``limit`` of them.

    ``codes``: what each student wrote (:func:`own_code` of their notebook). A class where many copied one
    source has many pairs: the candidates are compared most promising first, and the search stops at
    ``limit`` pairs (the report then says there may be more).
    """
    students = sorted(s for s in codes if codes[s].strip())
    n = len(students)
    if n < 2:  # nothing to pair: a lone submission's grade never imports numpy or copydetect
        return []
    import numpy as np
    from copydetect.utils import get_token_coverage

    prints = [fingerprint(codes[s]) for s in students]
    held: dict[int, list[int]] = {}
    for i, fp in enumerate(prints):
        for h in fp.hashes:
            held.setdefault(h, []).append(i)
    idiom = max(MIN_COMMON, int(common_share * n))
    common = {h for h, who in held.items() if len(who) > idiom}
    if common:  # an idiom of the exercise: out of every comparison, as the stub is
        for fp in prints:
            for h in fp.hashes & common:
                del fp.hash_idx[h]
            fp.hashes -= common
            fp.coverage = get_token_coverage(fp.hash_idx, K, len(fp.normalised))
    shared = [h for h, who in held.items() if len(who) >= 2 and h not in common]
    if not shared:
        return []
    column = {h: j for j, h in enumerate(shared)}
    m = np.zeros((n, len(shared)), dtype=np.float32)
    for i, fp in enumerate(prints):
        m[i, [column[h] for h in fp.hashes if h in column]] = 1.0
    counts = m @ m.T
    sizes = np.array([max(len(fp.hashes), 1) for fp in prints], dtype=np.float32)
    # each side's share of fingerprints held by the other, the lower of the two. The final measure counts
    # characters, not fingerprints, and came out 0.07 to 0.11 above this one on 3,582 pairs of
    # benchmarks/similarity.py's class (none under 0.5 reached 0.59): three quarters of the threshold is safe
    rough = counts / np.maximum.outer(sizes, sizes)
    out: list[SimilarPair] = []
    rows, cols = np.nonzero(np.triu(rough >= 0.75 * threshold, k=1))
    for k in np.argsort(-rough[rows, cols], kind="stable"):
        i, j = int(rows[k]), int(cols[k])
        (sim_i, sim_j), (sp_i, sp_j) = compare(prints[i], prints[j])
        if min(sim_i, sim_j) < threshold:
            continue
        if len(out) == limit:
            break
        out.append(SimilarPair(Side(students[i], sim_i, codes[students[i]], sp_i),
                               Side(students[j], sim_j, codes[students[j]], sp_j)))
    out.sort(key=lambda p: (-p.similarity, p.a.student, p.b.student))
    return out


def marked_html(code: str, marks: list[tuple[int, int]], *, context: int = 3) -> str:
    """``code`` escaped for HTML, each shared span in ``<mark>``; long stretches far from any mark elided."""
    from autograder.report.html import esc as escape

    pieces: list[str] = []
    at = 0
    for start, end in sorted(marks):
        start = max(start, at)
        if end <= start:
            continue
        pieces.append(_elide(escape(code[at:start]), context, first=not pieces, last=False))
        pieces.append("<mark>" + escape(code[start:end]) + "</mark>")
        at = end
    pieces.append(_elide(escape(code[at:]), context, first=not pieces, last=True))
    return "".join(pieces)


def _elide(text: str, context: int, *, first: bool, last: bool) -> str:
    """Unmarked code: only ``context`` lines kept next to each mark (a gap becomes ``...``)."""
    lines = text.split("\n")
    if len(lines) <= 2 * context + 2:
        return text
    head = [] if first else lines[: context + 1]
    tail = [] if last else lines[-context - 1:]
    return "\n".join([*head, "...", *tail]) if head or tail else "..."
