"""One container per worker, from the CPU grader image (docker/cpu/Dockerfile).

Each container runs the same worker as the process backend, with no network,
a read-only root, and memory, CPU and process limits; the course material is
mounted read-only and submissions travel in the jobs, so nothing else of the
host is visible. The sandboxes inside still apply their own isolation where
the container allows it, and report what they could not have.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from autograder.backends import WorkerFatal
from autograder.backends.config import WorkerConfig
from autograder.backends.process import ProcessBackend

DEFAULT_IMAGE = "torchgrader:cpu"  # as built in docker/README.md
COURSE_MOUNT = "/course"


class DockerBackend(ProcessBackend):
    name = "docker"

    def __init__(self, config: WorkerConfig, workers: int, log_dir: Path | None = None, *,
                 image: str = DEFAULT_IMAGE, docker: str = "docker", cpus: float = 1.0,
                 pids: int = 512) -> None:
        super().__init__(config, workers, log_dir)
        if shutil.which(docker) is None:
            raise WorkerFatal(f"--backend docker needs the `{docker}` command, and a running Docker engine")
        self.image = image
        self.docker = docker
        self.cpus = cpus
        self.pids = pids
        self.run_tag = f"torchgrader-{os.getpid()}"

    def container_config(self) -> WorkerConfig:
        inner = WorkerConfig(**{**self.config.__dict__})
        inner.course = COURSE_MOUNT
        inner.protected = []  # nothing of the host is mounted but the course
        return inner

    def argv(self, slot: int) -> list[str]:
        # Judge, sandbox server and one sandbox each hold torch: room for all three.
        memory_gb = self.config.memory_gb + 2
        return [
            self.docker, "run", "-i", "--rm",
            "--name", f"{self.run_tag}-{slot}",
            "--network", "none",
            "--read-only",
            "--tmpfs", "/tmp:rw,nosuid,size=1g",
            "--memory", f"{memory_gb:g}g", "--memory-swap", f"{memory_gb:g}g",
            "--cpus", f"{self.cpus:g}",
            "--pids-limit", str(self.pids),
            "--security-opt", "no-new-privileges",
            "-e", "OMP_NUM_THREADS=1",
            "-e", f"TORCHGRADER_CONTAINER_MEMORY={memory_gb:g}",  # the memory report states docker's limit
            "-v", f"{Path(self.config.course).resolve()}:{COURSE_MOUNT}:ro",
            "--entrypoint", "python",
            self.image,
            "-m", "autograder.backends.worker", self.container_config().to_json(),
        ]

    def env(self) -> dict[str, str] | None:
        return None  # docker's own environment; the container has its own

    def kill_command(self, slot: int) -> list[str] | None:
        return [self.docker, "kill", f"{self.run_tag}-{slot}"]
