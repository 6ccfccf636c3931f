"""An assignment's rules applied to one student: may they submit now, how late is it, which attempt counts.

One place decides each rule, and the same functions feed the upload check,
the student's page (the rules shown before submitting), the history and the
gradebook, so what a student is told is what the gradebook does.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from autograder.report.view import time_text
from autograder.service.config import Policy, ServiceConfig
from autograder.service.ledger import Adjustment, adjusted, adjustments_of
from autograder.service.store import ResultRow, ServiceStore, Submission


@dataclass
class Refusal:
    """Why an upload is refused now; ``retry_after`` seconds when waiting helps."""

    message: str
    status: int = 403
    retry_after: int | None = None


@dataclass
class Standing:
    """A submission's place in the rules: its score after the late penalty, and whether it counts."""

    submission: Submission
    result: ResultRow | None
    penalty_percent: float
    score: float | None  # after staff's adjustments and the penalty; None until graded
    counts: bool = False
    adjustments: list[Adjustment] = field(default_factory=list)  # staff's, oldest first
    late_days_used: int = 0  # of the student's bank, covering this many of its late days (no penalty for them)


@dataclass
class LateDays:
    """A student's bank of late days for the course (``[course] late_days``) and what each assignment spent."""

    bank: int
    used: dict[str, int] = field(default_factory=dict)  # assignment -> days its counting attempt spent

    @property
    def left(self) -> int:
        return self.bank - sum(self.used.values())


def deadline_for(policy: Policy, person: str, store: ServiceStore) -> dt.datetime | None:
    """The student's deadline: their extension when they have one, else the assignment's."""
    ext = store.extension(person, policy.id)
    if ext is not None:
        return dt.datetime.fromtimestamp(ext, ZoneInfo(policy.timezone))
    return policy.deadline


def late_days(deadline: dt.datetime | None, when: float) -> int:
    """Started days after the deadline (0 when on time)."""
    if deadline is None:
        return 0
    late = when - deadline.timestamp()
    return max(0, math.ceil(late / 86400)) if late > 0 else 0


def penalty_percent(policy: Policy, days: int) -> float:
    return min(100.0, policy.late_penalty_per_day * days) if policy.late == "penalty" else 0.0


def counted(store: ServiceStore, submissions: list[Submission]) -> list[Submission]:
    """The attempts that count against the limit: not those that ended in a grader error."""
    out = []
    for s in submissions:
        results = [r for r in store.result_summaries(s.id) if r[1] == "hidden"]
        if results and results[-1][2] == "internal_error":
            continue
        out.append(s)
    return out


def refusal(policy: Policy, person: str, store: ServiceStore, now: float | None = None) -> Refusal | None:
    """Why ``person`` may not submit to ``policy``'s assignment now (None: they may)."""
    now = time.time() if now is None else now
    deadline = deadline_for(policy, person, store)
    if deadline is not None and now > deadline.timestamp() and policy.late == "refuse":
        return Refusal(f"the deadline ({when(deadline)}) has passed and this assignment takes no late submissions")
    mine = counted(store, store.submissions(person, policy.id))
    if policy.max_attempts and len(mine) >= policy.max_attempts:
        return Refusal(f"you have used all {policy.max_attempts} attempts of this assignment")
    if policy.cooldown_minutes and mine:
        wait = mine[-1].created + policy.cooldown_minutes * 60 - now
        if wait > 0:
            return Refusal(f"the next attempt is possible in {math.ceil(wait)} s (a cooldown of "
                           f"{policy.cooldown_minutes:g} min between attempts)", 429, math.ceil(wait))
    return None


def standings(policy: Policy, store: ServiceStore, person: str, *, hidden: bool = True,
              latest: dict[str, ResultRow] | None = None, bank: int = 0) -> list[Standing]:
    """Every submission of ``person`` with its penalised score; the one that counts is marked.

    With ``hidden=False`` (a student before the deadline while the hidden tests' results are hidden) the
    scores are the public tests' and no attempt is marked: which one counts is decided by the hidden
    results, and neither a mark nor an order may depend on what the student is not shown yet.
    ``latest``: the class's newest results on those suites (``ServiceStore.latest_results``), read once by a
    caller that lists the class; without it only this person's are read.
    ``bank``: the late days the student has left for this assignment (``course_standings``): each attempt's
    first ``bank`` late days cost nothing, and the counting one records how many it spends.
    """
    if latest is None:
        latest = store.latest_results(policy.id, "hidden" if hidden else "public", person=person)
    out = []
    subs = store.submissions(person, policy.id)
    changes = adjustments_of(store, [s.id for s in subs])
    for s in subs:
        r = latest.get(s.id)
        covered = min(s.late_days, bank) if policy.late == "penalty" else 0
        pct = penalty_percent(policy, s.late_days - covered)
        total = adjusted_total(r, changes.get(s.id, [])) if r is not None else 0.0
        score = None if r is None or r.status == "internal_error" else round(total * (1 - pct / 100), 6)
        out.append(Standing(s, r, pct, score, adjustments=changes.get(s.id, [])))
        out[-1].late_days_used = covered
    graded = [st for st in out if st.score is not None]
    if graded and hidden:
        best = graded[-1] if policy.counts == "last" else max(graded, key=lambda st: (st.score, st.submission.created))
        best.counts = True
    for st in out:
        if not st.counts:
            st.late_days_used = 0  # only the attempt that counts spends the bank
    return out


def course_standings(cfg: ServiceConfig, store: ServiceStore, person: str, *,
                     latest: dict[str, dict[str, ResultRow]] | None = None,
                     hidden: dict[str, bool] | None = None) -> tuple[dict[str, list[Standing]], LateDays]:
    """Every assignment's standings of ``person`` with their bank of late days spent, and the bank.

    The bank is spent automatically, assignment by assignment in deadline order (then the config's), on the
    late days of each one's counting attempt (whole started days), up to what is left; the penalty applies only
    to the days beyond it. It is computed, never stored, so a regrade or an extension that changes which attempt
    counts, or how late it is, gives the days back at once. ``latest``: per assignment, as for ``standings``;
    ``hidden``: per assignment, whether the hidden results decide (default: yes).
    """
    bank = LateDays(cfg.late_days)
    out: dict[str, list[Standing]] = {}
    far = dt.datetime.max.replace(tzinfo=dt.UTC)
    order = sorted(cfg.assignments, key=lambda p: p.deadline or far)  # stable: the config's order on a tie
    for p in order:
        sts = standings(p, store, person, hidden=(hidden or {}).get(p.id, True),
                        latest=(latest or {}).get(p.id), bank=bank.left)
        bank.used[p.id] = sum(st.late_days_used for st in sts)
        out[p.id] = sts
    return {p.id: out[p.id] for p in cfg.assignments}, bank


def adjusted_total(r: ResultRow, changes: list[Adjustment]) -> float:
    """``r``'s total after staff's ``changes`` to its exercises' points."""
    return total_after(r.total, r.result, changes)


def total_after(total: float, result: dict[str, Any], changes: list[Adjustment]) -> float:
    """A result's ``total`` after staff's ``changes``; ``result``: its stored dict (exercises and tests)."""
    if not changes:
        return total
    points = {e["id"]: (sum(t.get("points", 0) for t in e.get("tests", [])), float(e.get("max_points", 0)))
              for e in result.get("exercises", [])}
    after = adjusted(points, changes)
    return round(total + sum(after[ex] - points[ex][0] for ex in points), 6)


def when(d: dt.datetime) -> str:
    """A deadline in its own (the assignment's) time zone, as every page shows a time."""
    return time_text(d)


def rules(policy: Policy, deadline: dt.datetime | None, late_days_left: int = 0) -> list[str]:
    """The rules in words, as the student reads them before submitting (``late_days_left``: of their bank)."""
    out = [("Your best attempt counts." if policy.counts == "best" else "Your last graded attempt counts.")]
    out.append(f"At most {policy.max_attempts} attempts." if policy.max_attempts else "No limit on attempts.")
    if policy.cooldown_minutes:
        out.append(f"Wait {policy.cooldown_minutes:g} min between attempts.")
    out.append("Refused uploads and attempts that end in a grader error do not count.")
    if deadline is None:
        out.append("No deadline.")
    else:
        out.append(f"Deadline: {when(deadline)} ({deadline.tzinfo}).")
        out.append("Late submissions are refused." if policy.late == "refuse" else
                   f"Late submissions lose {policy.late_penalty_per_day:g}% of their score per started day" +
                   (f" beyond your late days ({late_days_left} left for the course, spent automatically)."
                    if late_days_left > 0 else "."))
    if policy.regrade_requests_until is not None:
        out.append(f"You may ask for a regrade of a test or an exercise until {when(policy.regrade_requests_until)}.")
    if policy.hide_hidden_until_deadline and deadline is not None:
        out.append("Before the deadline you see the public tests' results; the hidden tests' after it.")
    return out


def hidden_visible(policy: Policy, deadline: dt.datetime | None, now: float | None = None) -> bool:
    """Whether a student sees the hidden suites' results now."""
    if not policy.hide_hidden_until_deadline or deadline is None:
        return True
    return (time.time() if now is None else now) >= deadline.timestamp()
