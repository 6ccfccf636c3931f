"""The same image and the same batch on rootless Podman, as an ordinary user (no Docker daemon needed).

Podman gets the image the Docker tests built (``docker save | podman load``: no second build).
The batch runs as that user with the system's Python 3.11 and this checkout on PYTHONPATH
(the CLI process never imports torch; the workers run in the containers). Skipped, with the
reason, where podman is not installed or no ordinary user can be made.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.docker.test_engine import REF, SQUARES, demo_folder, gradebook, stored
from tests.helpers import DEMO_COURSE, ROOT

pytestmark = pytest.mark.docker

USER = "tgpodman"  # as `bash ../shared/docker-engine.sh podman tgpodman` makes it
OVERLAY = '[storage]\ndriver = "overlay"\n[storage.options.overlay]\nmount_program = "/usr/bin/fuse-overlayfs"\n'
PYTHON = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"


def as_user(command: str, timeout: float = 900, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["su", "-", USER, "-c", command], capture_output=True, text=True, timeout=timeout, **kw)


def _image_id(cmd: list[str], image: str) -> str:
    got = subprocess.run([*cmd, "image", "inspect", "--format", "{{.Id}}", image], capture_output=True, text=True,
                         timeout=120)
    return got.stdout.strip().removeprefix("sha256:") if got.returncode == 0 else ""


@pytest.fixture(scope="session")
def podman_image(image):
    """The Docker-built image, loaded into USER's rootless Podman (again only when it was rebuilt)."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (Debian: `bash ../shared/docker-engine.sh podman USER`)")
    if os.geteuid() != 0 or shutil.which("su") is None or not os.path.exists(PYTHON):
        pytest.skip(f"needs root (to act as an ordinary user) and {PYTHON} for that user")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", USER], check=True, capture_output=True)
    for f in ("/etc/subuid", "/etc/subgid"):
        if f"{USER}:" not in Path(f).read_text():
            with open(f, "a") as fh:
                fh.write(f"{USER}:100000:65536\n")
    home = Path(pwd.getpwnam(USER).pw_dir)
    conf = home / ".config" / "containers" / "storage.conf"
    if shutil.which("fuse-overlayfs") and not conf.exists() and not (home / ".local/share/containers").exists():
        # A fresh user's storage: overlay through fuse-overlayfs (the vfs default copies every layer in full:
        # tens of GB and minutes for one load of the image)
        as_user(f"mkdir -p ~/.config/containers && printf '%s' {shlex.quote(OVERLAY)} "
                "> ~/.config/containers/storage.conf")
    ours = as_user(f"podman image inspect --format '{{{{.Id}}}}' {image}").stdout.strip()
    if ours != _image_id(["docker"], image):
        save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
        load = subprocess.run(["su", "-", USER, "-c", "podman load"], stdin=save.stdout, capture_output=True,
                              text=True, timeout=1200)
        save.wait(timeout=60)
        assert load.returncode == 0, load.stderr[-2000:]
    return image


def test_backend_podman_grades_a_folder_as_an_ordinary_user(podman_image):
    work = Path(tempfile.mkdtemp(prefix="torchgrader-podman-"))
    try:
        subs = demo_folder(work / "subs", alice=REF, bob=SQUARES)
        out = work / "out"
        shutil.chown(work, USER)
        for p in [subs, *subs.iterdir()]:
            shutil.chown(p, USER)
        paths = os.pathsep.join([str(ROOT), *(p for p in sys.path if p.endswith("site-packages"))])
        cmd = shlex.join(["env", f"PYTHONPATH={paths}", PYTHON, "-m", "autograder.cli", "grade", str(subs),
                          "--out", str(out), "--assignment", "demo", "--course", str(DEMO_COURSE), "--jobs", "2",
                          "--backend", "podman", "--docker-image", podman_image, "--progress", "plain"])
        p = as_user(f"cd {shlex.quote(str(work))} && {cmd}")
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        assert gradebook(out) == {"alice": ("6", "graded"), "bob": ("5", "graded")}
        protections = json.loads(stored(out, "alice")[0])["protections"]
        assert "private root" in protections["filesystem"] and "NOT" not in protections["network"]
        # Rootless Podman on cgroup v1 ignores --memory: the report reads the container's real limit, and says so.
        assert "per container" in protections["memory"] or "has no memory limit" in protections["memory"]
        left = as_user("podman ps -a --format '{{.Names}}'").stdout.split()
        assert not [n for n in left if n.startswith("torchgrader-")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
