"""One container per worker, from a grader image (docker/cpu/Dockerfile, docker/gpu/Dockerfile).

Each container runs the same worker as the process backend, with no network,
a read-only root, and memory, CPU and process limits. It sees only the
grading material (public side, hidden suites, probes, data: never the
references, alternatives or mutants), staged into a private folder and
mounted read-only; submissions travel in the jobs, so nothing else of the
host is visible. The container runs as the uid that owns the staged folder
(never root), so the folder can stay unreadable to everyone else. The
sandboxes inside apply their own isolation (user namespaces, which Docker's
default seccomp and AppArmor profiles forbid: hence ``seccomp=unconfined``
and ``apparmor=unconfined``; the sandbox installs its own seccomp filter
after it is set up) and report what they could not have. Each sandbox mounts
a fresh /proc of its own PID namespace, which the kernel refuses in a user
namespace while the engine's masked /proc paths are mounted over the
container's: hence ``systempaths=unconfined`` (Podman: ``unmask=ALL``). The
container's own /proc is never shown to a sandbox.

Before the first container the image is checked: it must exist (docker's own
message otherwise) and have been built from this checkout's grader code (its
record, :mod:`autograder.batch.image_digest`), else "rebuild the image".
``podman`` is the same backend on rootless Podman (:class:`PodmanBackend`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from autograder.batch import DEFAULT_IMAGE, image_digest, material
from autograder.batch.backends import DEFAULT_GPUS, Deliver, Job
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend
from autograder.errors import WorkerFatal

COURSE_MOUNT = "/course"
CONTAINER_GONE_S = 30.0  # how long the engine may take to remove an exited --rm container
JUDGE_UID = 10001  # the images' `judge` user: who the container runs as when the batch runs as root

# `docker run` exits with these codes when the container never ran the worker.
DOCKER_EXITS = {
    125: "docker could not create or start the container (a missing image, an option the engine refuses, "
         "or the engine itself)",
    126: "the container's `python` could not be run",
    127: "the container has no `python` command (is this a torchgrader image?)",
}


def gpus_for(image: str, gpus: str | None) -> str | None:
    """``--gpus`` value: "auto" gives the GPU image every GPU and the CPU image none."""
    if gpus in (None, "", "none"):
        return None
    if gpus == "auto":
        tag = image.rsplit("/", 1)[-1]
        return "all" if "gpu" in tag or "cuda" in tag else None
    return gpus


class DockerBackend(ProcessBackend):
    name = "docker"
    shares_server = False  # each container's worker starts its own, inside the container's limits
    unmask = "systempaths=unconfined"  # the engine's spelling: no masked /proc paths, so a sandbox gets its own /proc

    def __init__(self, config: WorkerConfig, workers: int, log_dir: Path | None = None, *,
                 image: str = DEFAULT_IMAGE, docker: str | None = None, cpus: float = 1.0,
                 pids: int = 512, gpus: str | None = DEFAULT_GPUS, stage_dir: Path | None = None) -> None:
        super().__init__(config, workers, log_dir)
        docker = docker or self.name
        if shutil.which(docker) is None:
            raise WorkerFatal(f"--backend {self.name} needs the `{docker}` command"
                              + (", and a running Docker engine" if self.name == "docker" else ""))
        self.image = image
        self.docker = docker
        self.cpus = cpus
        self.pids = pids
        self.gpus = gpus_for(image, gpus)
        self.run_tag = f"torchgrader-{os.getpid()}"
        self._own_stage = stage_dir is None
        if stage_dir is None:
            from autograder.batch.inputs import private_tempdir

            stage_dir = private_tempdir("material")
        self.stage_dir = Path(stage_dir)
        material.stage(Path(config.course), config.assignment, self.stage_dir)
        if os.getuid() == 0:  # never run the container as root: hand the copy to the image's judge user
            material.chown_tree(self.stage_dir, JUDGE_UID, JUDGE_UID)
            self.user = f"{JUDGE_UID}:{JUDGE_UID}"
        else:
            self.user = f"{os.getuid()}:{os.getgid()}"
        self._checked = False

    def user_options(self) -> list[str]:
        return ["--user", self.user]

    def memory_env(self, memory_gb: float) -> list[str]:
        return ["-e", f"TORCHGRADER_CONTAINER_MEMORY={memory_gb:g}"]  # the memory report states docker's limit

    def check_image(self) -> None:
        """The image exists and was built from this grader's code; WorkerFatal saying what to do otherwise."""
        build = image_digest.rebuild_hint(self.image).replace("rebuild the image: ", "")
        found = subprocess.run([self.docker, "image", "inspect", "--format", "{{.Id}}", self.image],
                               capture_output=True, text=True, timeout=120)
        if found.returncode != 0:
            raise WorkerFatal(f"the grader image {self.image} is not there ({self.docker} says: "
                              f"{(found.stderr or found.stdout).strip()[-500:]}). Build it from the repository root: "
                              f"`{build}`")
        got = subprocess.run([self.docker, "run", "--rm", "--network", "none", "--pull", "never",
                              "--entrypoint", "cat", self.image, image_digest.RECORD],
                             capture_output=True, text=True, timeout=120)
        if got.returncode in DOCKER_EXITS:  # the container never ran: nothing was read, nothing is known of the image
            raise WorkerFatal(f"{self.docker} could not create or start a container from {self.image} to read "
                              f"its build record ({self.docker} says: {got.stderr.strip()[-500:] or 'nothing'}). "
                              f"Check that {self.docker} runs containers for this user "
                              f"(`{self.docker} run --rm --network none {self.image} true`), then grade again")
        recorded = None
        if got.returncode == 0:
            import json

            try:
                recorded = json.loads(got.stdout)
            except ValueError:
                recorded = None
        if not isinstance(recorded, dict):
            raise WorkerFatal(f"the grader image {self.image} has no record of what it was built from "
                              f"({image_digest.RECORD}: {got.stderr.strip()[-300:] or 'unreadable'}): it predates "
                              f"this grader; {image_digest.rebuild_hint(self.image)}")
        newer = image_digest.staleness(recorded, Path(self.config.course), self.config.assignment,
                                       image_digest.own_package(), material_too=False)
        if newer:
            raise WorkerFatal(f"the grader image {self.image} is older than this checkout: {' and '.join(newer)} "
                              f"changed since it was built, and its containers would grade with the old code. "
                              f"{image_digest.rebuild_hint(self.image)}")

    def ensure_image(self) -> None:
        """Check the image once, before the first container (the service calls it before each start)."""
        if not self._checked:
            self.check_image()
            self._checked = True

    def grade_jobs(self, jobs: list[Job], deliver: Deliver) -> None:
        if jobs:
            self.ensure_image()
        super().grade_jobs(jobs, deliver)

    def container_config(self) -> WorkerConfig:
        return self.config.elsewhere(COURSE_MOUNT)  # nothing of the host is mounted but the grading material

    def argv(self, slot: int) -> list[str]:
        # Judge, sandbox server and one sandbox each hold torch: room for all three.
        memory_gb = self.config.options.limits.memory_bytes / 2**30 + 2
        return [
            self.docker, "run", "-i", "--rm", "--pull", "never",
            "--name", f"{self.run_tag}-{slot}",
            *self.user_options(),
            "--network", "none",
            "--read-only",
            # exec: inductor and Triton load the libraries they compile from here
            "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=1g",
            "--memory", f"{memory_gb:g}g", "--memory-swap", f"{memory_gb:g}g",
            "--cpus", f"{self.cpus:g}",
            "--pids-limit", str(self.pids),
            "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges",
            # the sandbox needs unprivileged user namespaces, which Docker's default profiles forbid
            "--security-opt", "seccomp=unconfined",
            "--security-opt", "apparmor=unconfined",
            # each sandbox mounts its own /proc: refused while the engine masks paths of the container's
            "--security-opt", self.unmask,
            *(["--gpus", self.gpus] if self.gpus else []),
            "-e", "OMP_NUM_THREADS=1",
            *self.memory_env(memory_gb),
            "-e", "HOME=/tmp/judge", "-e", "USER=judge",  # the uid may have no passwd entry
            "-v", f"{self.stage_dir.resolve()}:{COURSE_MOUNT}:ro",
            "--entrypoint", "python",
            self.image,
            "-m", "autograder.batch.backends.worker", self.container_config().to_json(),
        ]

    def env(self) -> dict[str, str] | None:
        return None  # docker's own environment; the container has its own

    def kill_command(self, slot: int) -> list[str] | None:
        return [self.docker, "kill", f"{self.run_tag}-{slot}"]

    def explain_exit(self, code: int) -> str:
        why = DOCKER_EXITS.get(code)
        if why is None:
            return ""
        return (f"{why}. Check that the image exists (`{self.docker} image inspect {self.image}`; build it with "
                f"`docker build --network host -f docker/{'gpu' if self.gpus else 'cpu'}/Dockerfile -t {self.image} .`)"
                + (", that the NVIDIA Container Toolkit is installed for --gpus" if self.gpus else "")
                + f", and that `{self.docker} run --rm {self.image} --help` works; {self.docker}'s own message "
                  "is below")

    def close(self) -> None:
        """Wait for the workers, then for their containers to be gone, before the staged material goes.

        ``--rm`` is the engine's to carry out once a container has exited, a moment after its
        ``docker run`` returns: a batch that ended with its containers still listed would leave
        them behind for whoever looks next, so each one started here is waited for, and removed
        if the engine has not done it within CONTAINER_GONE_S.
        """
        super().close()
        with self._lock:
            names = [f"{self.run_tag}-{slot}" for slot in self._pipes]
        if names:
            self.remove_containers(names)
        if self._own_stage:
            shutil.rmtree(self.stage_dir, ignore_errors=True)

    def remove_containers(self, names: list[str]) -> None:
        deadline = time.monotonic() + CONTAINER_GONE_S
        left = self.listed(names)
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = self.listed(names)
        if left:
            subprocess.run([self.docker, "rm", "-f", *left], capture_output=True, timeout=120)

    def listed(self, names: list[str]) -> list[str]:
        """Which of these containers the engine still lists (running, exiting or awaiting removal)."""
        try:
            got = subprocess.run([self.docker, "ps", "-a", "--filter", f"name={self.run_tag}-",
                                  "--format", "{{.Names}}"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return []
        return [n for n in got.stdout.split() if n in names]


class PodmanBackend(DockerBackend):
    """The same containers on rootless Podman, for servers that allow no Docker daemon.

    Podman's differences: ``--userns=keep-id`` with ``--user`` of the calling user runs the
    container as that user (who owns the staged folder) with the same uid inside;
    ``unmask=ALL`` is its spelling of systempaths;
    and rootless on cgroup v1 it ignores ``--memory``, so the memory report reads the container's
    real limit (cgroups.per_process_report) instead of being told one.
    """

    name = "podman"
    unmask = "unmask=ALL"

    def user_options(self) -> list[str]:
        if os.getuid() == 0:  # rootful podman as root: as docker, never root inside
            return ["--user", self.user]
        # keep-id maps the caller's uid to itself; --user then runs as it (not as the image's USER judge)
        return ["--userns", "keep-id", "--user", f"{os.getuid()}:{os.getgid()}"]

    def memory_env(self, memory_gb: float) -> list[str]:
        return []  # podman may ignore --memory (rootless, cgroup v1): the report reads what the container has
