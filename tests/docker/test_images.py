"""The grader images install what the grader needs to run (read from pyproject.toml, so they cannot drift)."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.helpers import ROOT

IMPORT_NAMES = {"scikit-learn": "sklearn"}


def runtime_modules() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = meta["dependencies"] + meta["optional-dependencies"]["data"]
    names = {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0] for r in reqs}
    return {IMPORT_NAMES.get(n, n) for n in names}


@pytest.mark.parametrize("image", ["cpu", "gpu"])
def test_every_runtime_dependency_is_installed_and_checked(image):
    text = (ROOT / "docker" / image / "Dockerfile").read_text()
    assert "--no-deps" not in text  # the GPU image once skipped matplotlib and rich: the class report crashed
    assert re.search(r'pip install (-c \S+ )?"/opt/torchgrader\[data\]"', text)
    smoke = [m for m in re.findall(r'python -c "import ([\w, ]+);', text) if "autograder" in m]
    assert smoke, "the image's build ends with an import check of the grader and its dependencies"
    assert runtime_modules() <= {m.strip() for m in smoke[0].split(",")}


def test_the_gpu_image_keeps_its_cuda_torch():
    text = (ROOT / "docker" / "gpu" / "Dockerfile").read_text()
    assert "print('torch==' + torch.__version__)\" > /tmp/keep-torch.txt" in text
    assert "pip install -c /tmp/keep-torch.txt" in text


INSTRUCTIONS = {"FROM", "ARG", "ENV", "RUN", "COPY", "USER", "WORKDIR", "ENTRYPOINT", "CMD", "LABEL"}


def instructions(image: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuation lines joined, comments dropped), each one checked known."""
    lines, cur = [], ""
    for raw in (ROOT / "docker" / image / "Dockerfile").read_text().splitlines():
        if not cur and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        cur += raw.rstrip("\\").strip() + " "
        if not raw.rstrip().endswith("\\"):
            lines.append(cur.strip())
            cur = ""
    out = [(line.split(" ", 1)[0], line.split(" ", 1)[1] if " " in line else "") for line in lines]
    assert not cur and all(word in INSTRUCTIONS for word, _ in out), [w for w, _ in out if w not in INSTRUCTIONS]
    return out


@pytest.mark.parametrize("image", ["cpu", "gpu"])
def test_both_images_build_from_a_local_base_and_wheel_folder(image):
    """An air-gapped site: an explicit base image, docker/wheels/ first, another index or none at all."""
    steps = instructions(image)
    assert steps[0][0] == "ARG" and steps[0][1].startswith("BASE_IMAGE=") and steps[1] == ("FROM", "${BASE_IMAGE}")
    base = steps[0][1].split("=", 1)[1]
    assert base == ("python:3.11-slim" if image == "cpu" else "pytorch/pytorch:2.13.0-cuda12.8-cudnn9-runtime")
    args = {v.split("=", 1)[0] for k, v in steps if k == "ARG"}
    assert {"BASE_IMAGE", "TORCH_VERSION", "INDEX_URL", "OFFLINE"} <= args
    assert ("COPY", "docker/wheels/ /opt/wheels/") in steps
    conf = next(v for k, v in steps if k == "RUN" and "/etc/pip-build.conf" in v)
    assert "find-links = /opt/wheels" in conf and "no-index = true" in conf and "index-url = $INDEX_URL" in conf
    assert ("ENV", "PIP_CONFIG_FILE=/etc/pip-build.conf") in steps
    assert any("autograder.batch.image_digest /course /opt/torchgrader/autograder > /opt/torchgrader/material.json"
               in v for k, v in steps if k == "RUN")  # what the image was built from (stale-image check)
    ignore = (ROOT / "docker" / image / "Dockerfile.dockerignore").read_text()
    assert "!docker/wheels/**" in ignore
    if image == "cpu":
        torch = next(v for k, v in steps if k == "RUN" and "/opt/wheels/torch-" in v)
        assert 'pip install "$wheel"' in torch and '--index-url "$TORCH_INDEX"' in torch  # local wheel, else the index
    else:
        assert not any("torch==${TORCH_VERSION}" in v and "pip install" in v for k, v in steps if k == "RUN")


def test_the_classic_builder_ignores_the_same_files():
    """Without BuildKit (Debian's docker.io has no buildx) only .dockerignore counts: it is the CPU image's file."""
    assert (ROOT / ".dockerignore").read_text() == (ROOT / "docker" / "cpu" / "Dockerfile.dockerignore").read_text()
    assert (ROOT / "docker" / "gpu" / "Dockerfile.dockerignore").read_text() == (ROOT / ".dockerignore").read_text()
