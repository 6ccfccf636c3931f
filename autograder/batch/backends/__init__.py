"""Where a batch's workers run. Every backend drives the same worker
(``autograder.batch.backends.worker``: a trusted judge process with its own warm
sandbox server) and hands back results as JSON; they differ only in where
that worker lives:

- ``process``: local worker processes (the default),
- ``docker``: one container per worker, from the CPU grader image,
- ``dask``: the workers of a Dask distributed cluster, each running local workers.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

BACKENDS = ("process", "docker", "dask")


@dataclass
class Job:
    id: str  # unique within the batch
    name: str  # the submission's file name, as students' messages will name it
    path: Path  # a readable local copy
    attempts: int = 0

    def payload(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "data": base64.b64encode(self.path.read_bytes()).decode()}


# deliver(job, result dict or None, error message when None, worker label); called on the caller's thread
Deliver = Callable[[Job, "dict[str, Any] | None", str, str], None]


class WorkerDied(Exception):
    """A worker stopped (or could not start) while grading a job; the job may be retried once."""


class WorkerFatal(Exception):
    """No worker can grade anything (the assignment's suites cannot run, the engine is missing)."""


class Backend(Protocol):
    name: str
    workers: int

    def run(self, jobs: list[Job], deliver: Deliver) -> None:
        """Grade every job, calling ``deliver`` once per job on this thread; raises WorkerFatal."""
