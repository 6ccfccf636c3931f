"""What the class got wrong: ``report.html`` with plots (each student's page is :mod:`.feedback_page`).

The class report is for staff: score distribution, per-exercise and per-test
failure rates, the most common misconceptions (the same teaching message
given to many students), the slowest submissions and every error (timeouts,
memory, crashes, unreadable files, grader failures). Plots are made with
matplotlib (Agg) and embedded, so the page is one self-contained file.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from autograder.report.attention import KINDS, Attention
from autograder.report.files import write_atomic
from autograder.report.html import esc as _e
from autograder.report.html import page as _page
from autograder.report.similarity import LIMIT, THRESHOLD, SimilarPair, marked_html
from autograder.report.submission import submission_dir
from autograder.report.text import first_line
from autograder.report.text import pts as _pts
from autograder.report.view import cell_where
from autograder.results import SubmissionResult

SIDE_BY_SIDE = 40  # similar pairs shown side by side (the table lists them all)

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
    """One mistake, however many tests showed it: the tests and the students under it."""

    exercise: str
    key: str  # the suite's misconception key, or the message with its numbers blanked where the suite gave none
    example: str
    tests: dict[str, int] = field(default_factory=dict)  # test name -> students who failed it this way
    students: list[str] = field(default_factory=list)  # each student once

    @property
    def count(self) -> int:
        return len(self.students)

    @property
    def test(self) -> str:
        return ", ".join(self.tests)


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
    groups: dict[tuple[str, str], Misconception] = {}
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
                errors.append(ErrorRow(who, kind, cell_where(c), first_line(c.message, 240)))
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
                    if t.message and not _is_generic(t.message):
                        key = t.misconception or _mistake(t.message)
                        m = groups.setdefault((e.id, key), Misconception(e.id, key, t.message))
                        m.tests[t.name] = m.tests.get(t.name, 0) + 1
                        if who not in m.students:
                            m.students.append(who)
                    kind = _error_kind(t.status, t.message)
                    if kind:
                        errors.append(ErrorRow(who, kind, f"{e.id}: {t.name}", first_line(t.message, 240)))
    mis = sorted(groups.values(), key=lambda m: (-m.count, m.exercise, m.key))
    order = {e: i for i, e in enumerate(ids)}
    test_list = sorted(tests.values(), key=lambda t: (order.get(t.exercise, 1e9), t.name))
    errors.sort(key=lambda e: (e.kind, e.student))
    return ClassStats(results, ids, titles, test_list, mis, errors)


_RAISED = re.compile(r"\braised (\w+(?:\.\w+)*): ")


_INPUT = re.compile(r"\bon [^.]*? (?=(?:has|had|returned|gave|is|was|were) )")


def _mistake(message: str) -> str:
    """A message's mistake where the suite named none, whichever input the test tried: the exception raised,
    else the message without the input it names (its first ``on <input>``), numbers blanked."""
    m = _RAISED.search(message)
    if m:
        return f"raised {m[1]}: {normalise(message[m.end():])}"
    return normalise(_INPUT.sub("", message, count=1))


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
    out: dict[str, str] = {}
    if stats.graded:
        out["scores"] = _png(scores_figure(stats))
        out["exercises"] = _png(exercises_figure(stats))
        fig = failing_tests_figure(stats)
        if fig is not None:
            out["tests"] = _png(fig)
    return out


def scores_figure(stats: ClassStats):
    import_plotting()
    import matplotlib.pyplot as plt

    graded = stats.graded
    fig, ax = plt.subplots(figsize=(7, 3.2))
    scores = [100 * r.total / r.max_total if r.max_total else 0 for r in graded]
    ax.hist(scores, bins=[i * 5 for i in range(21)], color="#4c72b0", edgecolor="white")
    ax.set_xlabel("score (% of the maximum)")
    ax.set_ylabel("students")
    ax.set_title(f"Score distribution ({len(graded)} graded submissions)")
    return fig


def exercises_figure(stats: ClassStats):
    """Mean score and share losing points per exercise; the legend sits above the axes, never on a bar."""
    import_plotting()
    import matplotlib.pyplot as plt

    graded = stats.graded
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
    ax.set_xlabel("%")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, fontsize=8, frameon=False)  # above the bars
    return fig


def failing_tests_figure(stats: ClassStats, worst_n: int = 25):
    """The tests failed most often; each label whole (wrapped, never cut), the figure as tall as they need.

    Only tests that someone failed: a bar at 0 % says nothing the table does not, and a class where every
    test passed gets no chart at all (drawing one was most of a correct class's report time).
    """
    import textwrap

    worst = sorted((t for t in stats.tests if t.attempts and t.failed), key=lambda t: -t.rate)[:worst_n]
    if not worst:
        return None
    import_plotting()
    import matplotlib.pyplot as plt

    labels = [textwrap.fill(f"{t.exercise}: {t.name}", 60, break_long_words=True) for t in worst]
    lines = sum(label.count("\n") + 1 for label in labels)
    fig, ax = plt.subplots(figsize=(9, 0.2 * lines + 0.15 * len(worst) + 1))
    ax.barh(range(len(worst)), [100 * t.rate for t in worst], color="#c44e52")
    ax.set_yticks(range(len(worst)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of graded submissions failing")
    ax.set_title("Tests failed most often")
    return fig


# ---------------------------------------------------------------------- the page
def class_report_html(results: Sequence[SubmissionResult], *, title: str, exercise_ids: list[str] | None = None,
                      superseded: Sequence[tuple[str, str, str]] = (), problems: Sequence[str] = (),
                      top: int = 20, plots: bool | None = None, names: Mapping[str, str] | None = None,
                      attention: Mapping[str, Sequence[Attention]] | None = None,
                      pairs: Sequence[SimilarPair] | None = None, partial: str = "",
                      link: Callable[[SubmissionResult], str] | None = None) -> str:
    """``superseded``: (student, older source, the source that counts); ``problems``: unreadable inputs.

    ``plots``: draw the charts (default: only for a class, i.e. more than one
    submission; for one student they say nothing the tables do not, and cost
    a second and a half of matplotlib). ``names``: each student's name as the
    LMS gave it; ``attention``: blank, duplicate, late per student (:mod:`.attention`);
    ``pairs``: near-identical code (:mod:`.similarity`; None: not looked for);
    ``partial``: why the report is not the whole class yet (an interrupted batch); ``link``: each
    student's feedback page (default: ``<student>/feedback.html`` beside report.html, as a batch writes it).
    A page served with a Content-Security-Policy allows its one inline script by :data:`SCRIPT_CSP`.
    """
    stats = class_stats(results, exercise_ids)
    attention = attention or {}
    draw = len(stats.results) > 1 if plots is None else plots
    images = _plots(stats) if draw else {}
    graded = stats.graded
    totals = [r.total for r in graded]
    max_total = max((r.max_total for r in graded), default=0)
    b: list[str] = [f"<h1>{_e(title)}: class report</h1>"]
    if partial:
        b.append(f"<p class=\"partial\">{_e(partial)}</p>")
    cards: list[tuple[str, object]] = [("submissions", len(stats.results)), ("graded", len(graded)),
             ("not gradable", len(stats.results) - len(graded))]
    if totals:
        cards += [("mean", f"{statistics.mean(totals):.1f} / {_pts(max_total)}"),
                  ("median", f"{statistics.median(totals):g} / {_pts(max_total)}"),
                  ("full marks", sum(r.total >= r.max_total for r in graded))]
    for kind in KINDS:
        cards.append((kind, sum(any(a.kind == kind for a in attention.get(_who(r), ())) for r in stats.results)))
    if pairs is not None:
        cards.append(("similar pairs", len(pairs)))
    b.append("<div class=\"cards\">" + "".join(f"<div class=\"card\">{_e(k)}<b>{_e(v)}</b></div>" for k, v in cards)
             + "</div>")
    if not draw:
        b.append("<p class=\"muted\">Charts are drawn for a class (more than one submission); "
                 "the tables below say it all for one.</p>")
    b += _students_section(stats, names or {}, attention, pairs or [], link or feedback_href)
    b += _scores_section(stats, images)
    b += _exercises_section(stats, images)
    b += _tests_section(stats, images)
    b += _misconceptions_section(stats, top)
    b += _slowest_section(stats)
    b += _errors_section(stats)
    b += _flagged_section(stats, attention)
    b += _similarity_section(pairs)
    b += _inputs_section(superseded, problems)
    return _page(f"{title}: class report", "\n".join(b), script=SORT_SCRIPT)


def _who(r: SubmissionResult) -> str:
    return r.student or r.submission


# Click a header to sort by it (again: the other way). Numbers sort by value (``data-sort``), text as text.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir);
      var numeric = th.dataset.type === "num", body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col], v = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent;
        return numeric ? parseFloat(v) : v.trim().toLowerCase();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), c = numeric ? x - y : x.localeCompare(y);
        return dir === "ascending" ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

# The script's CSP source: a page served with ``script-src 'self'`` adds this to run it (and nothing else inline).
SCRIPT_CSP = "'sha256-" + base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode() + "'"


def feedback_href(r: SubmissionResult) -> str:
    """The student's feedback page, relative to report.html (both live in the batch's --out folder)."""
    return quote(submission_dir(r, Path(".")).name) + "/feedback.html"


def _students_section(stats: ClassStats, names: Mapping[str, str], attention: Mapping[str, Sequence[Attention]],
                      pairs: Sequence[SimilarPair], link: Callable[[SubmissionResult], str]) -> list[str]:
    """Every submission, one sortable row each, linking to the student's feedback: the page a TA opens first."""
    similar: dict[str, list[tuple[int, str]]] = {}
    for n, p in enumerate(pairs, start=1):
        similar.setdefault(p.a.student, []).append((n, p.b.student))
        similar.setdefault(p.b.student, []).append((n, p.a.student))
    b = [f"<h2 id=\"students\">Students ({len(stats.results)})</h2>",
         "<p class=\"muted\">Click a column's header to sort by it. Each student links to their feedback page.</p>",
         "<div class=\"wide\"><table class=\"sortable students\"><thead><tr><th>student</th><th>name</th>"
         "<th data-type=\"num\">total</th><th>status</th><th>flags</th>"
         + "".join(f"<th data-type=\"num\" title=\"{_e(stats.titles.get(ex, ''))}\">{_e(ex)}</th>"
                   for ex in stats.exercise_ids)
         + "</tr></thead><tbody>"]
    for r in sorted(stats.results, key=lambda r: _who(r)):
        who = _who(r)
        pts = {e.id: e for e in r.exercises}
        cells = [f"<td><a href=\"{_e(link(r))}\">{_e(who)}</a></td>", f"<td>{_e(names.get(who, ''))}</td>",
                 f"<td class=\"num\" data-sort=\"{r.total:g}\">{_pts(r.total)} / {_pts(r.max_total)}</td>"]
        cells.append(f"<td>{_e(r.status.replace('_', ' '))}</td>")
        flags = [f"<span class=\"flag {_e(a.kind)}\" title=\"{_e(a.staff)}\">{_e(a.kind)}</span>"
                 for a in attention.get(who, ())]
        if r.flags:
            flags.append(f"<span class=\"flag tamper\" title=\"{_e(r.review)}\">touches the grader</span>")
        if r.grader_errors:
            flags.append("<span class=\"flag grader\">grader error</span>")
        flags += [f"<a class=\"flag similar\" href=\"#pair-{n}\">similar to {_e(other)}</a>" if n <= SIDE_BY_SIDE
                  else f"<span class=\"flag similar\">similar to {_e(other)}</span>"
                  for n, other in similar.get(who, [])]
        cells.append(f"<td class=\"flags\">{' '.join(flags)}</td>")
        for ex in stats.exercise_ids:
            e = pts.get(ex)
            cells.append(f"<td class=\"num\" data-sort=\"{e.points:g}\">{_pts(e.points)}</td>" if e
                         else "<td class=\"num\" data-sort=\"-1\"></td>")
        b.append("<tr>" + "".join(cells) + "</tr>")
    b.append("</tbody></table></div>")
    return b


def _similarity_section(pairs: Sequence[SimilarPair] | None) -> list[str]:
    """Pairs of near-identical code, side by side, the shared regions marked."""
    b = [f"<h2 id=\"similarity\">Similar code ({'not looked for' if pairs is None else len(pairs)})</h2>"]
    if pairs is None:
        return b
    b.append(f"<p class=\"muted\">Pairs whose own code (the stub's lines, comments and check cells left out) is "
             f"at least {100 * THRESHOLD:.0f}% shared, each way, by winnowing fingerprints (MOSS's algorithm, "
             "via copydetect): renaming variables, reordering functions and editing comments do not hide a copy. "
             "Shared regions are marked. A pair is a reason to read both, not a verdict.</p>")
    if not pairs:
        b.append("<p class=\"muted\">None.</p>")
        return b
    if len(pairs) >= LIMIT:
        b.append(f"<p class=\"partial\">The {LIMIT} most similar pairs are listed: there may be more.</p>")
    b.append("<table class=\"sortable pairs\"><thead><tr><th data-type=\"num\">pair</th><th>student</th>"
             "<th>student</th><th data-type=\"num\">shared</th></tr></thead><tbody>")
    for n, p in enumerate(pairs, start=1):
        number = f"<a href=\"#pair-{n}\">{n}</a>" if n <= SIDE_BY_SIDE else str(n)
        b.append(f"<tr><td class=\"num\" data-sort=\"{n}\">{number}</td>"
                 f"<td>{_e(p.a.student)}</td><td>{_e(p.b.student)}</td>"
                 f"<td class=\"num\" data-sort=\"{p.similarity:.4f}\">{100 * p.a.similarity:.0f}% / "
                 f"{100 * p.b.similarity:.0f}%</td></tr>")
    b.append("</tbody></table>")
    if len(pairs) > SIDE_BY_SIDE:
        b.append(f"<p class=\"muted\">The first {SIDE_BY_SIDE} pairs are shown side by side below.</p>")
    for n, p in enumerate(pairs[:SIDE_BY_SIDE], start=1):
        b.append(f"<h3 id=\"pair-{n}\">Pair {n}: {_e(p.a.student)} and {_e(p.b.student)}</h3>"
                 "<div class=\"pair\">")
        for side in (p.a, p.b):
            b.append(f"<div class=\"side\"><div class=\"muted\">{_e(side.student)}: "
                     f"{100 * side.similarity:.0f}% of this code is shared</div>"
                     f"<pre class=\"code\">{marked_html(side.code, side.marks)}</pre></div>")
        b.append("</div>")
    return b


def _plotted(title: str, plots: dict[str, str], key: str, alt: str) -> list[str]:
    """A section's heading, and under it its plot where one was drawn (``plots[key]``: the image's URL)."""
    b = [f"<h2>{title}</h2>"]
    if key in plots:
        b.append(f"<img alt=\"{alt}\" src=\"{plots[key]}\">")
    return b


def _scores_section(stats: ClassStats, plots: dict[str, str]) -> list[str]:
    """The histogram of totals."""
    b = _plotted("Score distribution", plots, "scores", "score distribution")
    if "scores" in plots:
        return b
    if not stats.graded:
        b.append("<p class=\"muted\">No graded submissions.</p>")
    else:
        b.append("<p>" + ", ".join(f"{_e(r.student or r.submission)}: {_pts(r.total)} / {_pts(r.max_total)}"
                                   for r in stats.graded) + "</p>")
    return b


def _exercises_section(stats: ClassStats, plots: dict[str, str]) -> list[str]:
    """Mean, maximum and how many lost points, per exercise."""
    graded = stats.graded
    b = _plotted("Per exercise", plots, "exercises", "per exercise")
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
    b = _plotted("Per test failure rates", plots, "tests", "tests failed most often")
    if stats.tests and not any(t.failed for t in stats.tests):
        b.append("<p>No test failed.</p>")
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
        b.append("<table class=\"misconceptions\"><tr><th>students</th><th>exercise</th><th>what they were told "
                 "(one example)</th><th>tests that showed it</th><th>who</th></tr>")
        for m in stats.misconceptions[:top]:
            share = 100 * m.count / len(graded) if graded else 0
            tests = "".join(f"<li>{_e(name)} <span class=\"muted\">({n})</span></li>" for name, n in m.tests.items())
            b.append(f"<tr><td class=\"num\">{m.count} ({share:.0f}%)</td><td>{_e(m.exercise)}</td>"
                     f"<td><pre>{_e(m.example[:600])}</pre></td><td><ul class=\"tests\">{tests}</ul></td>"
                     f"<td>{_e(', '.join(m.students))}</td></tr>")
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


def _row(*cells: str) -> str:
    """One table row of text cells, each escaped."""
    return "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>"


def _table(heads: Sequence[str], rows: Sequence[str]) -> list[str]:
    """A table with these column heads over ``rows`` (each from :func:`_row`); "None." when there are none."""
    if not rows:
        return ["<p class=\"muted\">None.</p>"]
    return ["<table><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>", *rows, "</table>"]


def _errors_section(stats: ClassStats) -> list[str]:
    """Timeouts, memory, crashes, unreadable files and grader failures."""
    b: list[str] = []
    b.append(f"<h2>Errors ({len(stats.errors)})</h2>")
    b.append("<p class=\"muted\">Timeouts, memory, crashes, unreadable files and grader failures.</p>")
    if stats.errors:
        kinds = Counter(e.kind for e in stats.errors)
        b.append("<p>" + ", ".join(f"{_e(k)}: {n}" for k, n in sorted(kinds.items())) + "</p>")
    rows = [_row(e.kind, e.student, e.where, e.message) for e in stats.errors]
    return b + _table(("kind", "student", "where", "message"), rows)


def _flagged_section(stats: ClassStats, attention: Mapping[str, Sequence[Attention]]) -> list[str]:
    """What a TA must look at: blank, duplicate and late submissions, and code that touches the grader."""
    b: list[str] = []
    flagged = [r for r in stats.results if r.flags or attention.get(_who(r))]
    b.append(f"<h2 id=\"flagged\">Flagged for review ({len(flagged)})</h2>")
    b.append("<p class=\"muted\">Blank submissions (the stub unchanged), byte-identical files, late files, and "
             "code that touches the grader or the interpreter's internals (tamper evidence found by the judge's "
             "scan of the source). Points are as measured; read the cells.</p>")
    rows = []
    for r in flagged:
        rows += [_row(_who(r), a.kind, "the submission", a.staff) for a in attention.get(_who(r), ())]
        rows += [_row(_who(r), "touches the grader", f.where, f.reason) for f in r.flags]
    return b + _table(("student", "what", "where", "why"), rows)


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
