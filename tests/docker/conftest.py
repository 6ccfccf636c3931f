"""A real container engine for the `docker`-marked tests, and the CPU grader image, built once.

The engine is started here when dockerd is installed but not running (and stopped afterwards):
the tests need it. The image is built once per test session from docker/cpu/Dockerfile, with the
CPU torch wheel in docker/wheels/ (fetched with pip when missing), so no torch index is needed;
the engine's layer cache makes a rebuild after a code change take seconds. The tests are skipped,
with the reason, only where no engine or no base image can be had.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT

BASE_IMAGE = "python:3.11-slim"  # docker/cpu/Dockerfile's default BASE_IMAGE
IMAGE = "torchgrader:cpu"  # the tag the docs' lines use
WHEELS = ROOT / "docker" / "wheels"


def engine_up(cmd: str = "docker") -> bool:
    try:
        return subprocess.run([cmd, "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def has_image(name: str, cmd: str = "docker") -> bool:
    return subprocess.run([cmd, "image", "inspect", name], capture_output=True, timeout=60).returncode == 0


@pytest.fixture(scope="session")
def engine():
    """A running Docker engine: the one already running, or a dockerd started (and stopped) here."""
    if shutil.which("docker") is None:
        pytest.skip("no Docker engine: the `docker` command is not installed (Debian: apt-get install docker.io)")
    started = None
    if not engine_up():
        if shutil.which("dockerd") is None or os.geteuid() != 0:
            pytest.skip("no Docker engine is running, and dockerd cannot be started here (not installed, or not root)")
        log = open(Path(tempfile.gettempdir()) / "torchgrader-test-dockerd.log", "ab")  # noqa: SIM115
        # As ../shared/docker-engine.sh starts it: no bridge network (containers use --network none).
        started = subprocess.Popen(["dockerd", "--bridge=none", "--iptables=false", "--ip-forward=false",
                                    "--ip-masq=false"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not engine_up() and time.monotonic() < deadline and started.poll() is None:
            time.sleep(1)
        if not engine_up():
            started.terminate()
            pytest.skip(f"dockerd was started but did not answer within 60 s (see {log.name})")
    yield "docker"
    if started is not None:
        started.terminate()
        try:
            started.wait(timeout=60)
        except subprocess.TimeoutExpired:
            started.kill()


@pytest.fixture(scope="session")
def image(engine):
    """The CPU grader image, built once per session from this checkout (cached layers make it quick)."""
    if not has_image(BASE_IMAGE):
        pytest.skip(f"no base image {BASE_IMAGE}, and no registry to pull it from "
                    "(`bash ../shared/docker-engine.sh` makes a local one from Debian)")
    if not any(WHEELS.glob("torch-2.13.0*.whl")):  # the CPU wheel where pip resolves one; torch's index otherwise
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(WHEELS),
                        "torch==2.13.0"], capture_output=True, timeout=1200)
    built = subprocess.run(["docker", "build", "--network", "host", "-f", "docker/cpu/Dockerfile", "-t", IMAGE, "."],
                           cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if built.returncode != 0:
        pytest.fail(f"docker build of {IMAGE} failed:\n{(built.stdout + built.stderr)[-3000:]}")
    return IMAGE


def leftover_containers(prefix: str = "torchgrader-", cmd: str = "docker") -> list[str]:
    got = subprocess.run([cmd, "ps", "-a", "--filter", f"name={prefix}", "--format", "{{.Names}}"],
                         capture_output=True, text=True, timeout=60)
    return got.stdout.split()
