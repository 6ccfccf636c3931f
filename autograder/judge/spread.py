"""One submission over two judges at once, when the machine has a core to spare.

A lone submission (`torchgrader grade` of one notebook, a student's on an idle
service) is graded by one judge on one core; the judge and its sandbox take turns,
so the other core sits idle. A job whose ``Job.spread`` is 2 (the local backend lends
it an idle worker's share when it has more workers than submissions; the service,
an idle slot's) is graded by two: the judge forks once the submission is loaded,
the copy grades the later exercises in a sandbox of its own while the judge grades
the earlier ones, and the copy's results come back over a pipe as JSON.

The copy is the judge itself (forked before any of this submission's code ran,
with its own connection to the sandbox server), so a grade still comes only from
trusted code. Each half replays every cell in its own sandbox; an exercise's tests
then run after those of the earlier exercises in its half only, as in ``validate``,
which grades each exercise on its own. Every test starts from torch's modes as the
cells left them (``runtime.TorchModes``), so a function that leaves gradient
recording off costs the same either way; what a function leaves in the student's
own globals reaches the later exercises of its half only. Where the two halves cut is fixed by the
exercises' time limits (the staff's word for which are heavy): the same submission
is always split the same way. A copy that fails in any way costs nothing: its half
is graded by the judge after its own.
"""

from __future__ import annotations

import json
import os
import signal
import traceback
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from autograder.results import CellResult

Item = TypeVar("Item")
# seconds the judge and its copy wait for their last sandbox's output before the results are merged (each
# half's output is read to its end); the other half is usually still grading meanwhile
OUTPUT_WAIT = 2.0


def halves(items: Sequence[Item], weight: Callable[[Item], float], exercise: Callable[[Item], str],
           ) -> tuple[list[Item], list[Item]]:
    """``items`` cut in two at an exercise boundary, where the weights of the exercises before it come
    closest to half of all of them; ([], items) when there is only one exercise.

    ``weight`` is an item's exercise's weight (counted once per exercise); the order is kept.
    """
    order: list[str] = []
    weights: dict[str, float] = {}
    for item in items:
        ex = exercise(item)
        if ex not in weights:
            order.append(ex)
            weights[ex] = max(0.0, float(weight(item)))
    if len(order) < 2:
        return [], list(items)
    total = sum(weights.values())
    best, best_gap, before = 1, float("inf"), 0.0
    for n, ex in enumerate(order[:-1], start=1):
        before += weights[ex]
        gap = abs(total / 2 - before)
        if gap < best_gap:
            best, best_gap = n, gap
    first = set(order[:best])
    return [i for i in items if exercise(i) in first], [i for i in items if exercise(i) not in first]


class Copy:
    """The forked judge grading one half; the parent reads its results with :meth:`results`."""

    def __init__(self, grade_half: Callable[[], dict[str, Any]]) -> None:
        """Fork now; the child runs ``grade_half`` (a ``SubmissionResult.to_dict()``), writes it as JSON and exits."""
        read, write = os.pipe()
        judge = os.getpid()
        pid = os.fork()
        if pid == 0:  # the copy: never returns
            code = 0
            try:
                os.close(read)
                from autograder.sandbox.isolation import die_with_parent

                die_with_parent()  # a worker killed mid-test takes its copy with it
                if os.getppid() != judge:  # it died before the signal was armed
                    os._exit(1)
                try:
                    payload = grade_half()
                except BaseException as e:  # noqa: BLE001 - the judge grades this half itself
                    payload, code = {"error": "".join(traceback.format_exception(e))[-3000:]}, 1
                data = json.dumps(payload).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(write, view):]
            finally:
                os._exit(code)  # nothing of the judge's (pytest, its temporary folders) is torn down here
        os.close(write)
        self.pid = pid
        self._read = read

    def kill(self) -> None:
        """The judge stopped before reading the results (its own half raised): end the copy now."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self._read)
        os.waitpid(self.pid, 0)

    def results(self) -> dict[str, Any] | None:
        """The copy's results once it is done, or None when it failed (its half is then the judge's).

        Why it failed goes to file descriptor 2 (a worker's log; pytest's captured stderr would swallow
        it), for staff: the grade is whole either way."""
        chunks = []
        try:
            while chunk := os.read(self._read, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._read)
            _, status = os.waitpid(self.pid, 0)
        try:
            got = json.loads(b"".join(chunks))
        except ValueError:
            got = None
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and isinstance(got, dict) and "exercises" in got:
            return got
        why = got.get("error") if isinstance(got, dict) else f"it ended with wait status {status}"
        os.write(2, f"torchgrader: the judge's copy failed, so the judge graded its half itself: {why}\n".encode())
        return None


def merge_cells(mine: list[CellResult], theirs: list[CellResult]) -> list[CellResult]:
    """Every cell once: the judge's own record, and the copy's for a cell only the copy recorded."""
    by_index = {c.index: c for c in theirs}
    by_index.update({c.index: c for c in mine})
    return sorted(by_index.values(), key=lambda c: c.index)


def merge_output(mine: str, theirs: str) -> str:
    """The judge's output, then what the copy printed after the cells both replayed."""
    shared = os.path.commonprefix([mine, theirs])
    return mine + theirs[len(shared):]
