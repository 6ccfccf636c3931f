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
after it is set up) and report what they could not have.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from autograder.batch import material
from autograder.batch.backends import WorkerFatal
from autograder.batch.backends.config import WorkerConfig
from autograder.batch.backends.process import ProcessBackend

DEFAULT_IMAGE = "torchgrader:cpu"  # as built in docker/README.md
COURSE_MOUNT = "/course"
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

    def __init__(self, config: WorkerConfig, workers: int, log_dir: Path | None = None, *,
                 image: str = DEFAULT_IMAGE, docker: str = "docker", cpus: float = 1.0,
                 pids: int = 512, gpus: str | None = "auto", stage_dir: Path | None = None) -> None:
        super().__init__(config, workers, log_dir)
        if shutil.which(docker) is None:
            raise WorkerFatal(f"--backend docker needs the `{docker}` command, and a running Docker engine")
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

    def container_config(self) -> WorkerConfig:
        return self.config.elsewhere(COURSE_MOUNT)  # nothing of the host is mounted but the grading material

    def argv(self, slot: int) -> list[str]:
        # Judge, sandbox server and one sandbox each hold torch: room for all three.
        memory_gb = self.config.options.limits.memory_bytes / 2**30 + 2
        return [
            self.docker, "run", "-i", "--rm",
            "--name", f"{self.run_tag}-{slot}",
            "--user", self.user,
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
            *(["--gpus", self.gpus] if self.gpus else []),
            "-e", "OMP_NUM_THREADS=1",
            "-e", f"TORCHGRADER_CONTAINER_MEMORY={memory_gb:g}",  # the memory report states docker's limit
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
        return (f"{why}. Check that the image exists (`docker image inspect {self.image}`; build it with "
                f"`docker build -f docker/{'gpu' if self.gpus else 'cpu'}/Dockerfile -t {self.image} .`)"
                + (", that the NVIDIA Container Toolkit is installed for --gpus" if self.gpus else "")
                + ", and that `docker run --rm " + self.image + " --help` works; docker's own message is below")

    def close(self) -> None:
        if self._own_stage:
            shutil.rmtree(self.stage_dir, ignore_errors=True)
