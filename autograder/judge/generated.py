"""Generated inputs for differential tests, drawn judge-side with Hypothesis.

A hidden suite compares the student's function with the exercise's truth on
many inputs it did not write by hand (odd shapes, layouts, dtypes, edge
values). Drawing them one sandbox round trip per example would cost a
millisecond or more each, so :func:`draw` only *collects* a fixed list of
examples: the suite then sends them in one call (a probe that loops, or a
list argument) and compares every answer in the judge.

The draw is derandomized: Hypothesis seeds it from ``seed`` (the suite passes
its own label, e.g. ``"views/flatten v1"``), so every submission is graded on
the same inputs and a grade is reproducible; changing the label changes the
inputs. Being the same for every submission, a draw is made once per judge
process (per strategy object, label and size) and each test gets its own deep
copy: drawing costs tens of milliseconds per test, every submission, otherwise.
"""

from __future__ import annotations

import copy
import hashlib
import os
from typing import Any

# Hypothesis runs every installed package's "hypothesis" entry point when it is first imported. None of
# them is the course's, and one that registers a random generator (trio's, which selenium brings) walks
# the judge's whole heap (gc.get_referrers): 0.3 s of every judge's start once torch is imported. The
# judge imports this module before any suite (autograder.judge.collect), so a suite's own import of
# hypothesis finds them off too.
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402 - after the plugins are switched off
from hypothesis import strategies as st  # noqa: E402 - as above

_DRAWN: dict[tuple[str, int], tuple[st.SearchStrategy[Any], list[Any]]] = {}


def ignore_local_constants() -> None:
    """Make Hypothesis's examples depend on the strategy and the seed only, not on what the judge has imported.

    Hypothesis mixes into what it generates some constants it reads from the
    source of every imported "local" module (outside site-packages and the
    standard library): the course's references, its helpers, an editable
    install of this package. A derandomized suite then drew other inputs in a
    batch worker than in ``--exercise`` runs, ``check`` or ``validate``, each of
    which imports other modules, so a borderline submission could score
    differently; and parsing those modules cost a fifth of a second of every
    cold start. The judge (:mod:`autograder.judge.plugin`) calls this once the
    suites are collected. Hypothesis's own list of constants stays in use.
    """
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    none = Constants()
    providers._get_local_constants = lambda: none  # private: tests/judge/test_generated.py checks it still works


def draw(strategy: st.SearchStrategy[Any], n: int, label: str) -> list[Any]:
    """``n`` examples of ``strategy`` (fewer if it cannot produce that many), the same for every call with ``label``."""
    hit = _DRAWN.get((label, n))
    if hit is not None and hit[0] is strategy:  # the very same strategy object (a suite's constant)
        return copy.deepcopy(hit[1])
    out = _draw(strategy, n, label)
    _DRAWN[(label, n)] = (strategy, out)  # holding the strategy keeps its id from being reused
    return copy.deepcopy(out)


def _draw(strategy: st.SearchStrategy[Any], n: int, label: str) -> list[Any]:
    out: list[Any] = []
    digest = int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "big")

    @seed(digest)
    @settings(
        max_examples=n,
        derandomize=False,  # the explicit seed above is the suite's; derandomize would ignore it
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        if len(out) < n:
            out.append(value)

    collect()
    return out
