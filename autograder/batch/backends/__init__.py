"""Where a batch's workers run. Every backend drives the same worker
(``autograder.batch.backends.worker``: a trusted judge process with its own warm
sandbox server) and hands back results as JSON; they differ only in where
that worker lives:

- ``process``: local worker processes (the default),
- ``docker``: one container per worker, from the CPU grader image,
- ``podman``: the same containers on rootless Podman (no daemon, an ordinary user),
- ``dask``: the workers of a Dask distributed cluster, each running local workers.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from autograder.batch import DEFAULT_IMAGE
from autograder.errors import WorkerDied as WorkerDied
from autograder.errors import WorkerFatal

if TYPE_CHECKING:
    from autograder.batch.backends.config import WorkerConfig


# The grading settings (GradeOptions fields) one job may choose for itself: which suites grade it. A worker
# grades consecutive jobs with the same choice in one pytest run (``validate`` orders its jobs so).
PER_JOB_OPTIONS = ("exercises", "public")

DEFAULT_BACKEND = "process"  # a name in REGISTRY: `grade --backend` and the service's `backend` default to it
DEFAULT_GPUS = "auto"  # --gpus for the containers: auto (all for a GPU image, none otherwise), none, all, ...


@dataclass
class Job:
    id: str  # unique within the batch
    name: str  # the submission's file name, as students' messages will name it
    path: Path  # a readable local copy
    attempts: int = 0
    options: dict[str, Any] | None = None  # some of PER_JOB_OPTIONS; None: the workers' settings as they are
    # judges that may grade it at once (judge/spread.py): 2 where an idle worker's share of the machine is
    # lent to it (a lone submission of a batch, a service's submission while another slot waits). Never a score's.
    spread: int = 1

    def __post_init__(self) -> None:
        unknown = set(self.options or ()) - set(PER_JOB_OPTIONS)
        if unknown:
            raise ValueError(f"a job may set only {', '.join(PER_JOB_OPTIONS)}, not {', '.join(sorted(unknown))}")

    def payload(self) -> dict[str, Any]:
        data = base64.b64encode(self.path.read_bytes()).decode()
        out: dict[str, Any] = {"id": self.id, "name": self.name, "data": data}
        if self.options:
            out["options"] = self.options
        if self.spread > 1:
            out["spread"] = self.spread
        return out


# deliver(job, result dict or None, error message when None, worker label); called on the caller's thread
Deliver = Callable[[Job, "dict[str, Any] | None", str, str], None]


class Backend(Protocol):
    name: str
    workers: int

    def grade_jobs(self, jobs: list[Job], deliver: Deliver) -> None:
        """Grade every job, calling ``deliver`` once per job on this thread; raises WorkerFatal."""


@dataclass
class Where:
    """What a backend factory may need: the workers' settings and how many, and where they run."""

    config: WorkerConfig
    jobs: int
    log_dir: Path
    docker_image: str = DEFAULT_IMAGE
    docker_gpus: str = DEFAULT_GPUS
    scheduler: str | None = None  # a Dask scheduler's address
    warm_up: bool = False  # each worker will grade more than one submission (a service): see ProcessBackend
    device: str = ""  # a local worker's one device ("cpu", "cuda:N": CUDA_VISIBLE_DEVICES); "": the host's as it is


def _process(w: Where) -> Backend:
    from autograder.batch.backends.process import ProcessBackend

    return ProcessBackend(w.config, w.jobs, w.log_dir, warm_up=w.warm_up, device=w.device)


def _docker(w: Where) -> Backend:
    from autograder.batch.backends.docker import DockerBackend

    return DockerBackend(w.config, w.jobs, w.log_dir, image=w.docker_image, gpus=w.docker_gpus)


def _podman(w: Where) -> Backend:
    from autograder.batch.backends.docker import PodmanBackend

    return PodmanBackend(w.config, w.jobs, w.log_dir, image=w.docker_image, gpus=w.docker_gpus)


def _dask(w: Where) -> Backend:
    if not w.scheduler:
        raise WorkerFatal("--backend dask needs --scheduler ADDRESS (tcp://host:8786)")
    from autograder.batch.backends.dask import DaskBackend

    return DaskBackend(w.config, w.scheduler, w.jobs)


# name -> factory; the CLI's --backend choices are these names. Each import is deferred to its factory,
# so that choosing `process` never imports Dask.
REGISTRY: dict[str, Callable[[Where], Backend]] = {"process": _process, "docker": _docker, "podman": _podman,
                                                  "dask": _dask}


def make_backend(name: str, where: Where) -> Backend:
    """The backend called ``name``; raises WorkerFatal when it is unknown or cannot start."""
    factory = REGISTRY.get(name)
    if factory is None:
        raise WorkerFatal(f"unknown backend {name!r} (known: {', '.join(REGISTRY)})")
    return factory(where)
