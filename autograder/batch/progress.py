"""Progress of a batch: a rich progress bar on a terminal, plain lines otherwise.

Both show the counts, the failures (submissions that could not be graded)
and an ETA; plain lines are one per graded submission, so a log file or CI
output reads as a record of the batch.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from autograder.printable import printable
from autograder.report.submission import console_report, protections_report
from autograder.report.text import sentences
from autograder.results import SubmissionResult


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Shared bookkeeping; subclasses only render."""

    def __init__(self, total: int, stream: TextIO, verbose: bool = False) -> None:
        self.total = total
        self.stream = stream
        self.verbose = verbose
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self._protections_shown = False

    @property
    def rate(self) -> float:
        """Submissions per minute so far."""
        elapsed = time.monotonic() - self.started
        return 60 * self.done / elapsed if elapsed > 0 and self.done else 0.0

    @property
    def eta(self) -> float | None:
        if not self.done:
            return None
        return (self.total - self.done) * (time.monotonic() - self.started) / self.done

    def advance(self, r: SubmissionResult) -> None:
        self.done += 1
        if r.status != "graded":
            self.failed += 1
        if not self._protections_shown and r.protections:
            self._protections_shown = True
            self.note(protections_report(r.protections))
        self.render(r)

    def note(self, text: str) -> None:
        print(printable(text, lines=True), file=self.stream, flush=True)  # the last line of defence: idempotent

    def render(self, r: SubmissionResult) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PlainProgress(Progress):
    def render(self, r: SubmissionResult) -> None:
        width = len(str(self.total))
        eta = self.eta
        tail = f"{self.failed} failed, {self.rate:.0f}/min, ETA {_clock(eta) if eta is not None else '?'}"
        head = f"[{self.done:>{width}}/{self.total}]"
        if self.verbose:
            self.note(f"{head} {tail}\n{console_report(r, verbose=True)}")
            return
        what = f"{printable(r.submission)}: {r.total:g} / {r.max_total:g} points ({r.seconds:.1f} s)"
        if r.status != "graded":
            what += f" {printable(r.status.upper())}: {printable(sentences(r.error))}"
        self.note(f"{head} {what}  | {tail}")


class RichProgress(Progress):
    def __init__(self, total: int, stream: TextIO, verbose: bool = False) -> None:
        super().__init__(total, stream, verbose)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar

        self.console = Console(file=stream)
        self.bar = Bar(TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("[red]{task.fields[failed]} failed"), TextColumn("{task.fields[rate]}/min"),
                       TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                       console=self.console, transient=False)
        self.task = self.bar.add_task("grading", total=total, failed=0, rate="0")
        self.bar.start()

    def note(self, text: str) -> None:
        self.console.print(printable(text, lines=True), markup=False, highlight=False)

    def render(self, r: SubmissionResult) -> None:
        if self.verbose:
            self.note(console_report(r, verbose=True))
        elif r.status != "graded":
            self.note(f"{printable(r.submission)}: {printable(r.status.upper())}: "
                      f"{printable(sentences(r.error))}")
        self.bar.update(self.task, advance=1, failed=self.failed, rate=f"{self.rate:.0f}")

    def close(self) -> None:
        self.bar.stop()


PROGRESS_MODES = ("auto", "bar", "plain")  # `grade --progress`; the first is the default


def make_progress(total: int, stream: TextIO | None = None, *, verbose: bool = False,
                  mode: str = PROGRESS_MODES[0]) -> Progress:
    """``mode``: auto (a bar on a terminal, lines otherwise), bar or plain."""
    stream = stream or sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    if mode == "bar" or (mode == "auto" and tty):
        try:
            return RichProgress(total, stream, verbose)
        except ImportError:
            pass
    return PlainProgress(total, stream, verbose)
