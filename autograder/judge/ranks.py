"""The judge's side of multi-process student code: read a rank report, blame the right rank.

A probe runs the student's function on every rank with
:func:`autograder.sandbox.ranks.run_ranks` and returns its report. The report
comes from the sandbox, so it is checked like any other untrusted value: its
shape is verified here, and the values it carries are compared by the suite
with expectations computed in the judge (never with what another rank said).

:func:`rank_values` turns a failed run into the message a student needs: which
rank raised (with the student's traceback), which rank ended the process
early, or which ranks were still waiting when time ran out (the classic
collective that not every rank reaches).
"""

from __future__ import annotations

import time
from typing import Any

from autograder.errors import StudentCrash, StudentError, StudentOverTime, StudentProblem

# Messages gloo gives a rank whose peer failed first: the peer is the one to blame.
_PEER_FAILURE = ("connection closed by peer", "read error", "connection reset", "timed out", "broken pipe")


def ranks_timeout(margin: float = 2.0, cap: float = 20.0) -> float:
    """Seconds a probe may give its ranks: what is left of this test's time limit, less a margin.

    The ranks then stop (all of them, killed) while the judge still has time
    to say which one hung, instead of the whole test timing out silently.
    """
    from autograder.judge.plugin import CONTEXT

    left = CONTEXT.deadline - time.monotonic() - margin
    return max(1.0, min(cap, left))


def _ranks(report: Any, world_size: int, label: str) -> list[dict]:
    ranks = report.get("ranks") if isinstance(report, dict) else None
    if (
        not isinstance(ranks, list)
        or len(ranks) != world_size
        or not all(isinstance(r, dict) and r.get("rank") == i for i, r in enumerate(ranks))
    ):
        raise StudentCrash(
            f"The grader's report of `{label}` on {world_size} ranks came back malformed: "
            "something in your notebook tampered with the grader's harness."
        )
    return ranks


def _names(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _is_peer_failure(entry: dict) -> bool:
    msg = str((entry.get("error") or {}).get("message", "")).lower()
    return any(p in msg for p in _PEER_FAILURE)


def _student_problem(entry: dict, label: str) -> StudentProblem:
    from autograder.judge.plugin import CONTEXT

    err: dict = entry["error"] if isinstance(entry.get("error"), dict) else {"message": str(entry.get("error"))}
    return CONTEXT._problem(err, label)


def rank_values(report: Any, world_size: int, label: str) -> list[Any]:
    """Each rank's value, in rank order; raises the student-facing problem when any rank failed."""
    ranks = _ranks(report, world_size, label)
    status = [str(r.get("status")) for r in ranks]
    if all(s == "ok" for s in status):
        return [r.get("value") for r in ranks]
    where = f"`{label}` on {world_size} ranks"
    by = {s: [i for i, x in enumerate(status) if x == s] for s in set(status)}
    # A rank that returned and exited while a slower one was still connecting the group's mesh makes that
    # one's set-up fail with "connection closed by peer": the exit is the cause, whichever finished first.
    setup = [i for i in by.get("setup", []) if "exited" not in by or not _is_peer_failure(ranks[i])]
    if setup:
        problem = _student_problem(ranks[setup[0]], label)
        raise StudentError(
            f"The grader could not start its process group for {where}: {problem.message}\n"
            "If your notebook calls torch.distributed.init_process_group (or sets a default group) at the top "
            "level of a cell, remove it: the grader starts the group and passes ranks to your functions."
        )
    if "exited" in by and (aborted := _aborted_in_collective(ranks, by["exited"], where)):
        raise StudentCrash(aborted)
    if "exited" in by:
        first = ranks[by["exited"][0]]
        how = (first.get("error") or {}).get("message") or first.get("exit") or "it ended"
        others = [i for i in range(world_size) if i not in by["exited"]]
        raise StudentCrash(
            f"In {where}, {_names(by['exited'])} ended its process before returning ({how})"
            + (f"; {_names(others)} then failed or waited for it in a collective" if others else "")
            + ". A rank must return normally: no sys.exit(), os._exit() or killing its own process."
        )
    errors = by.get("error", [])
    if errors:
        own = [i for i in errors if not _is_peer_failure(ranks[i])] or errors
        rank = own[0]
        problem = _student_problem(ranks[rank], label)
        also = [i for i in errors if i != rank]
        suffix = f" ({_names(also)} failed too.)" if also else ""
        problem.message = f"On rank {rank} of {world_size}: {problem.message}{suffix}"
        problem.args = (problem.message,)
        raise problem
    stuck = by.get("timeout", []) + by.get("stopped", [])
    done = by.get("ok", [])
    seconds = report.get("seconds") if isinstance(report, dict) else None
    limit = f" within {float(seconds):.0f} s" if isinstance(seconds, (int, float)) else ""
    if done:
        raise StudentOverTime(
            f"In {where}, {_names(stuck)} never returned{limit} while {_names(done)} had returned: "
            "a collective (barrier, all_reduce, broadcast...) that only some ranks call, or that ranks call "
            "in a different order, waits forever (or code that only some ranks run never ends). Every rank must "
            "make the same collective calls, in the same order (move them out of `if rank == 0:` blocks)."
        )
    raise StudentOverTime(
        f"In {where}, no rank returned{limit}: look for collectives the ranks call in different orders or with "
        "different shapes, or a loop that never ends."
    )


_COLLECTIVE_CAUSE = {
    "all_gather": "all_gather needs a tensor of the same shape on every rank, and output tensors of that shape",
    "all_gather_into_tensor": "all_gather_into_tensor needs the same input shape on every rank",
    "gather": "gather needs a tensor of the same shape on every rank",
    "all_reduce": "all_reduce needs a tensor of the same shape and dtype on every rank",
    "reduce": "reduce needs a tensor of the same shape and dtype on every rank",
    "broadcast": "broadcast needs a tensor of the same shape and dtype on every rank",
    "reduce_scatter": "reduce_scatter needs inputs and outputs of matching shapes on every rank",
    "scatter": "scatter needs tensors of the same shape on every rank",
    "all_to_all": "all_to_all needs matching split sizes on every rank",
}


def _aborted_in_collective(ranks: list[dict], exited: list[int], where: str) -> str:
    """The message for ranks that the communication library aborted (SIGABRT inside a collective), or "".

    gloo ends the process, with no Python exception, when the ranks' tensors for one collective do not
    match: that is not the student's code exiting, it is the collective's arguments differing by rank.
    """
    for i in exited:
        entry = ranks[i]
        abort = entry.get("abort")
        if "SIGABRT" not in str(entry.get("exit")) or not isinstance(abort, dict):
            continue
        collective = str(abort.get("collective") or "")[:60]
        if not collective.isidentifier():
            continue
        from autograder.judge.plugin import CONTEXT
        from autograder.session import format_frames

        found = abort.get("frames")
        frames: list = found if isinstance(found, list) else []
        cells = CONTEXT.session.cells_by_index if CONTEXT.session else {}
        line = format_frames(cells, frames[:1])
        cause = _COLLECTIVE_CAUSE.get(collective, f"{collective} needs matching tensors on every rank")
        return (f"In {where}, the communication library (gloo) aborted rank {i} inside "
                f"torch.distributed.{collective}" + (f", called from\n{line}\n" if line else ". ")
                + f"This is not your code exiting: {cause}, and here the ranks passed different sizes (or "
                "shapes, or dtypes). Shards may differ in size: make every rank pass the same shape (for "
                "example, exchange the sizes first and pad to the largest).")
    return ""


def group_left_alive(report: Any, world_size: int, label: str, check_value: float | None = None) -> bool:
    """Whether every rank left the process group working (the contract: the grader destroys it).

    With ``check_value`` (what the judge passed as the run's ``group_check``) the judge checks
    the effect itself: after the student's function, one all_reduce of
    ``check_value * (rank + 1)`` on the default group must give every rank the exact sum.
    Without it, only what each rank said (``dist.is_initialized()``) is read.
    """
    ranks = _ranks(report, world_size, label)
    if check_value is None:
        return all(r.get("group_alive") is True for r in ranks)
    expected = float(check_value) * world_size * (world_size + 1) / 2
    return all(type(r.get("group_sum")) is float and r["group_sum"] == expected for r in ranks)
