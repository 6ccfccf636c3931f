"""What the class got wrong: ``report.html`` with plots (each student's page is :mod:`.feedback_page`).

The class report is for staff: score distribution, per-exercise and per-test
failure rates, the most common misconceptions (the same teaching message
given to many students), the slowest submissions and every error (timeouts,
memory, crashes, unreadable files, grader failures). Plots are made with
matplotlib (Agg) and embedded, so the page is one self-contained file.
"""

from __future__ import annotations

import base64
import io
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.report.files import write_atomic
from autograder.report.html import esc as _e
from autograder.report.html import page as _page
from autograder.report.text import first_line
from autograder.report.text import pts as _pts
from autograder.results import SubmissionResult

# ---------------------------------------------------------------------- class statistics
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def normalise(message: str) -> str:
    """A failure message with its numbers blanked, so the same mistake on other values groups together."""
    first = " ".join(message.split())[:400]
    return _NUMBER.sub("#", first)


@dataclass
class TestStats:
    exercise: str
    name: str
    max_points: float
    attempts: int = 0
    failed: int = 0

    @property
    def rate(self) -> float:
        return self.failed / self.attempts if self.attempts else 0.0


@dataclass
class Misconception:
    exercise: str
    test: str
    pattern: str
    count: int
    example: str
    students: list[str] = field(default_factory=list)


@dataclass
class ErrorRow:
    student: str
    kind: str  # timeout | memory | crash | unreadable | grader error
    where: str
    message: str


@dataclass
class ClassStats:
    results: list[SubmissionResult]
    exercise_ids: list[str]
    titles: dict[str, str]
    tests: list[TestStats]
    misconceptions: list[Misconception]
    errors: list[ErrorRow]

    @property
    def graded(self) -> list[SubmissionResult]:
        return [r for r in self.results if r.status == "graded"]


def class_stats(results: Sequence[SubmissionResult], exercise_ids: list[str] | None = None) -> ClassStats:
    results = list(results)
    ids = list(exercise_ids or [])
    titles: dict[str, str] = {}
    tests: dict[tuple[str, str], TestStats] = {}
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
    errors: list[ErrorRow] = []
    for r in results:
        who = r.student or r.submission
        if r.status == "load_error":
            errors.append(ErrorRow(who, "unreadable", "the submission file", first_line(r.error, 240)))
        elif r.status != "graded":
            errors.append(ErrorRow(who, "grader error", "the whole submission", first_line(r.error, 240)))
        for c in r.cells:
            if c.status in ("timeout", "crashed") or (c.status == "error" and "MemoryError" in c.message):
                kind = {"timeout": "timeout", "crashed": "crash"}.get(c.status, "memory")
                errors.append(ErrorRow(who, kind, c.label or f"cell {c.index}", first_line(c.message, 240)))
        for e in r.exercises:
            titles.setdefault(e.id, e.title)
            if e.id not in ids:
                ids.append(e.id)
            for t in e.tests:
                if t.status == "skipped":
                    continue
                if t.status == "grader_error":
                    errors.append(ErrorRow(who, "grader error", f"{e.id}: {t.name}",
                                           first_line(t.detail, 240) or "the grader failed on this test"))
                    continue  # the grader's failure says nothing about the student
                ts = tests.setdefault((e.id, t.name), TestStats(e.id, t.name, t.max_points))
                if r.status != "graded":
                    continue  # an unreadable file says nothing about the tests
                ts.attempts += 1
                if t.status != "passed":
                    ts.failed += 1
                    if t.message:
                        groups[(e.id, t.name, normalise(t.message))].append((who, t.message))
                    kind = _error_kind(t.status, t.message)
                    if kind:
                        errors.append(ErrorRow(who, kind, f"{e.id}: {t.name}", first_line(t.message, 240)))
    mis = [Misconception(ex, name, pat, len(v), v[0][1], [w for w, _ in v]) for (ex, name, pat), v in groups.items()
           if not _is_generic(v[0][1])]
    mis.sort(key=lambda m: (-m.count, m.exercise, m.test))
    order = {e: i for i, e in enumerate(ids)}
    test_list = sorted(tests.values(), key=lambda t: (order.get(t.exercise, 1e9), t.name))
    errors.sort(key=lambda e: (e.kind, e.student))
    return ClassStats(results, ids, titles, test_list, mis, errors)


def _error_kind(status: str, message: str) -> str:
    if status == "timeout":
        return "timeout"
    low = message.lower()
    if "out of memory" in low or "memoryerror" in low:
        return "memory"
    if "stopped while running" in low or "could not be run for this test" in low:
        return "crash"
    return ""


def _is_generic(message: str) -> bool:
    """Messages that say the work is missing, not what the student misunderstood."""
    return "is not implemented yet" in message or "is not defined" in message


# ---------------------------------------------------------------------- plots
def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def import_plotting() -> None:
    """Import matplotlib (Agg): about a second, so a batch does it in a thread while it grades."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot  # noqa: F401


def _plots(stats: ClassStats) -> dict[str, str]:
    import_plotting()
    import matplotlib.pyplot as plt

    out: dict[str, str] = {}
    graded = stats.graded
    if graded:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        scores = [100 * r.total / r.max_total if r.max_total else 0 for r in graded]
        ax.hist(scores, bins=[i * 5 for i in range(21)], color="#4c72b0", edgecolor="white")
        ax.set_xlabel("score (% of the maximum)")
        ax.set_ylabel("students")
        ax.set_title(f"Score distribution ({len(graded)} graded submissions)")
        out["scores"] = _png(fig)

        fig, ax = plt.subplots(figsize=(7, 0.45 * len(stats.exercise_ids) + 1))
        means, fails = [], []
        for ex in stats.exercise_ids:
            got = [e for r in graded for e in r.exercises if e.id == ex and e.max_points]
            means.append(100 * statistics.mean(e.points / e.max_points for e in got) if got else 0)
            fails.append(100 * sum(e.points < e.max_points for e in got) / len(got) if got else 0)
        y = range(len(stats.exercise_ids))
        ax.barh([i + 0.2 for i in y], means, height=0.4, label="mean score %", color="#55a868")
        ax.barh([i - 0.2 for i in y], fails, height=0.4, label="students losing points %", color="#c44e52")
        ax.set_yticks(list(y), stats.exercise_ids)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.legend(loc="lower right", fontsize=8)
        ax.set_title("Per exercise")
        out["exercises"] = _png(fig)

        worst = sorted((t for t in stats.tests if t.attempts), key=lambda t: -t.rate)[:25]
        if worst:
            fig, ax = plt.subplots(figsize=(8, 0.32 * len(worst) + 1))
            labels = [f"{t.exercise}: {t.name[:60]}" for t in worst]
            ax.barh(range(len(worst)), [100 * t.rate for t in worst], color="#c44e52")
            ax.set_yticks(range(len(worst)), labels, fontsize=8)
            ax.invert_yaxis()
            ax.set_xlim(0, 100)
            ax.set_xlabel("% of graded submissions failing")
            ax.set_title("Tests failed most often")
            out["tests"] = _png(fig)
    return out


# ---------------------------------------------------------------------- the page
def class_report_html(results: Sequence[SubmissionResult], *, title: str, exercise_ids: list[str] | None = None,
                      superseded: Sequence[tuple[str, str, str]] = (), problems: Sequence[str] = (),
                      top: int = 20, plots: bool | None = None) -> str:
    """``superseded``: (student, older source, the source that counts); ``problems``: unreadable inputs.

    ``plots``: draw the charts (default: only for a class, i.e. more than one
    submission; for one student they say nothing the tables do not, and cost
    a second and a half of matplotlib).
    """
    stats = class_stats(results, exercise_ids)
    draw = len(stats.results) > 1 if plots is None else plots
    images = _plots(stats) if draw else {}
    graded = stats.graded
    totals = [r.total for r in graded]
    max_total = max((r.max_total for r in graded), default=0)
    b: list[str] = [f"<h1>{_e(title)}: class report</h1>"]
    cards: list[tuple[str, object]] = [("submissions", len(stats.results)), ("graded", len(graded)),
             ("not gradable", len(stats.results) - len(graded))]
    if totals:
        cards += [("mean", f"{statistics.mean(totals):.1f} / {_pts(max_total)}"),
                  ("median", f"{statistics.median(totals):g} / {_pts(max_total)}"),
                  ("full marks", sum(r.total >= r.max_total for r in graded))]
    b.append("<div class=\"cards\">" + "".join(f"<div class=\"card\">{_e(k)}<b>{_e(v)}</b></div>" for k, v in cards)
             + "</div>")
    if not draw:
        b.append("<p class=\"muted\">Charts are drawn for a class (more than one submission); "
                 "the tables below say it all for one.</p>")
    b += _scores_section(stats, images)
    b += _exercises_section(stats, images)
    b += _tests_section(stats, images)
    b += _misconceptions_section(stats, top)
    b += _slowest_section(stats)
    b += _errors_section(stats)
    b += _flagged_section(stats)
    b += _inputs_section(superseded, problems)
    return _page(f"{title}: class report", "\n".join(b))


def _scores_section(stats: ClassStats, plots: dict[str, str]) -> list[str]:
    """The histogram of totals."""
    b: list[str] = []
    b.append("<h2>Score distribution</h2>")
    if "scores" in plots:
        b.append(f"<img alt=\"score distribution\" src=\"{plots['scores']}\">")
    elif not stats.graded:
        b.append("<p class=\"muted\">No graded submissions.</p>")
    else:
        b.append("<p>" + ", ".join(f"{_e(r.student or r.submission)}: {_pts(r.total)} / {_pts(r.max_total)}"
                                   for r in stats.graded) + "</p>")
    return b


def _exercises_section(stats: ClassStats, plots: dict[str, str]) -> list[str]:
    """Mean, maximum and how many lost points, per exercise."""
    graded = stats.graded
    b: list[str] = []
    b.append("<h2>Per exercise</h2>")
    if "exercises" in plots:
        b.append(f"<img alt=\"per exercise\" src=\"{plots['exercises']}\">")
    b.append("<table><tr><th>exercise</th><th>mean</th><th>max</th><th>students losing points</th></tr>")
    for ex in stats.exercise_ids:
        got = [e for r in graded for e in r.exercises if e.id == ex]
        mx = max((e.max_points for e in got), default=0)
        mean = statistics.mean(e.points for e in got) if got else 0
        losing = sum(e.points < e.max_points for e in got)
        b.append(f"<tr><td>{_e(ex)} <span class=\"muted\">{_e(stats.titles.get(ex, ''))}</span></td>"
                 f"<td class=\"num\">{mean:.2f}</td><td class=\"num\">{_pts(mx)}</td>"
                 f"<td class=\"num\">{losing} ({100 * losing / len(got) if got else 0:.0f}%)</td></tr>")
    b.append("</table>")
    return b


def _tests_section(stats: ClassStats, plots: dict[str, str]) -> list[str]:
    """How often each test failed."""
    b: list[str] = []
    b.append("<h2>Per test failure rates</h2>")
    if "tests" in plots:
        b.append(f"<img alt=\"tests failed most often\" src=\"{plots['tests']}\">")
    b.append("<table><tr><th>exercise</th><th>test</th><th>points</th><th>failed</th></tr>")
    for t in stats.tests:
        b.append(f"<tr><td>{_e(t.exercise)}</td><td>{_e(t.name)}</td><td class=\"num\">{_pts(t.max_points)}</td>"
                 f"<td class=\"num\">{t.failed} / {t.attempts} ({100 * t.rate:.0f}%)</td></tr>")
    b.append("</table>")
    return b


def _misconceptions_section(stats: ClassStats, top: int) -> list[str]:
    """The same failure message given to several students: what to go over in class."""
    graded = stats.graded
    b: list[str] = []
    b.append("<h2>Most common misconceptions</h2>")
    b.append("<p class=\"muted\">The same failure message given to several students (numbers aside): "
             "what to go over in class.</p>")
    if stats.misconceptions:
        b.append("<table><tr><th>students</th><th>exercise / test</th><th>what they were told</th></tr>")
        for m in stats.misconceptions[:top]:
            share = 100 * m.count / len(graded) if graded else 0
            b.append(f"<tr><td class=\"num\">{m.count} ({share:.0f}%)</td><td>{_e(m.exercise)}<br>"
                     f"<span class=\"muted\">{_e(m.test)}</span></td><td><pre>{_e(m.example[:600])}</pre></td></tr>")
        b.append("</table>")
    else:
        b.append("<p class=\"muted\">No failures with a diagnosis.</p>")
    return b


def _slowest_section(stats: ClassStats) -> list[str]:
    """The ten slowest submissions and their slowest test."""
    b: list[str] = []
    b.append("<h2>Slowest submissions</h2>")
    slow = sorted(stats.results, key=lambda r: -r.seconds)[:10]
    b.append("<table><tr><th>student</th><th>seconds</th><th>slowest test</th></tr>")
    for r in slow:
        tests = [t for e in r.exercises for t in e.tests]
        worst = max(tests, key=lambda t: t.seconds, default=None)
        what = f"{worst.exercise}: {worst.name} ({worst.seconds:.1f} s)" if worst else ""
        b.append(f"<tr><td>{_e(r.student or r.submission)}</td><td class=\"num\">{r.seconds:.1f}</td>"
                 f"<td>{_e(what)}</td></tr>")
    b.append("</table>")
    return b


def _errors_section(stats: ClassStats) -> list[str]:
    """Timeouts, memory, crashes, unreadable files and grader failures."""
    b: list[str] = []
    b.append(f"<h2>Errors ({len(stats.errors)})</h2>")
    b.append("<p class=\"muted\">Timeouts, memory, crashes, unreadable files and grader failures.</p>")
    if stats.errors:
        kinds = Counter(e.kind for e in stats.errors)
        b.append("<p>" + ", ".join(f"{_e(k)}: {n}" for k, n in sorted(kinds.items())) + "</p>")
        b.append("<table><tr><th>kind</th><th>student</th><th>where</th><th>message</th></tr>")
        for e in stats.errors:
            b.append(f"<tr><td>{_e(e.kind)}</td><td>{_e(e.student)}</td><td>{_e(e.where)}</td>"
                     f"<td>{_e(e.message)}</td></tr>")
        b.append("</table>")
    else:
        b.append("<p class=\"muted\">None.</p>")
    return b


def _flagged_section(stats: ClassStats) -> list[str]:
    """Submissions whose code touches the grader (tamper evidence); points are as measured."""
    b: list[str] = []
    flagged = [r for r in stats.results if r.flags]
    b.append(f"<h2>Flagged for review ({len(flagged)})</h2>")
    b.append("<p class=\"muted\">Code that touches the grader or the interpreter's internals (tamper "
             "evidence found by the judge's scan of the source). Points are as measured; read the cells.</p>")
    if flagged:
        b.append("<table><tr><th>student</th><th>where</th><th>why</th></tr>")
        for r in flagged:
            for f in r.flags:
                b.append(f"<tr><td>{_e(r.student or r.submission)}</td><td>{_e(f.where)}</td>"
                         f"<td>{_e(f.reason)}</td></tr>")
        b.append("</table>")
    else:
        b.append("<p class=\"muted\">None.</p>")
    return b


def _inputs_section(superseded: Sequence[tuple[str, str, str]], problems: Sequence[str]) -> list[str]:
    """Inputs not graded: superseded by a newer submission, or unreadable."""
    b: list[str] = []
    if superseded or problems:
        b.append("<h2>Inputs not graded</h2>")
    if superseded:
        b.append("<p>Superseded by a newer submission of the same student:</p>"
                 "<table><tr><th>student</th><th>not graded</th><th>graded instead</th></tr>")
        for student, old, new in superseded:
            b.append(f"<tr><td>{_e(student)}</td><td>{_e(old)}</td><td>{_e(new)}</td></tr>")
        b.append("</table>")
    if problems:
        b.append("<p>Unreadable, skipped:</p><ul>" + "".join(f"<li>{_e(p)}</li>" for p in problems) + "</ul>")
    return b


def write_class_report(path: Path, results: Sequence[SubmissionResult], **kw) -> Path:
    return write_atomic(path, class_report_html(results, **kw))
